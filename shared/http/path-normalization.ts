import type { HttpConnectionManager } from '../config/envoy-types.js';
import { featureEnabled, runtimeFeature, runtimeInteger } from '../runtime.js';

/**
 * The connection manager's path normalization, as Envoy's ConnectionManagerUtility::
 * maybeNormalizePath and PathUtil do it (source/common/http/path_utility.cc), before routing and
 * every filter: a fragment refused (or cut off); `%2F`/`%5C` handled as path_with_escaped_slashes_action
 * says; RFC 3986 dot segments removed with Chromium's URL canonicalizer's rules (normalize_path);
 * runs of slashes merged (merge_slashes). The query is never touched. Pure, so that the admin can
 * explain a request with the same code the workers run.
 */

export type EscapedSlashesAction = 'KEEP_UNCHANGED' | 'REJECT_REQUEST' | 'UNESCAPE_AND_REDIRECT' | 'UNESCAPE_AND_FORWARD';

export interface PathNormalization {
  readonly normalize: boolean;
  readonly mergeSlashes: boolean;
  readonly escapedSlashes: EscapedSlashesAction;
  /** envoy.reloadable_features.http_reject_path_with_fragment (true): a `#` is a 400; else the fragment is cut off. */
  readonly rejectFragment: boolean;
}

/** continue: go on with `path`; reject: a 400; redirect: a 307 to `path` (UNESCAPE_AND_REDIRECT found an escaped slash). */
export interface Normalized {
  readonly action: 'continue' | 'reject' | 'redirect';
  readonly path: string;
}

const REJECT: Normalized = { action: 'reject', path: '' };

export function normalizePath(original: string, n: PathNormalization): Normalized {
  let path = original;
  const hash = path.indexOf('#');
  if (hash >= 0) {
    if (n.rejectFragment) return REJECT;
    path = path.slice(0, hash);
  }
  let action: Normalized['action'] = 'continue';
  if (n.escapedSlashes !== 'KEEP_UNCHANGED') {
    const unescaped = unescapeSlashes(path);
    if (unescaped !== undefined) {
      if (n.escapedSlashes === 'REJECT_REQUEST') return REJECT;
      if (n.escapedSlashes === 'UNESCAPE_AND_REDIRECT') action = 'redirect';
      path = unescaped;
    }
  }
  if (n.normalize) {
    const canonical = canonicalPath(path);
    if (canonical === undefined) return REJECT;
    path = canonical;
  }
  if (n.mergeSlashes) path = mergeSlashes(path);
  return { action, path };
}

function splitQuery(path: string): [string, string] {
  const q = path.indexOf('?');
  return q < 0 ? [path, ''] : [path.slice(0, q), path.slice(q)];
}

/** `%2F`/`%2f` as `/`, `%5C`/`%5c` as a backslash, in one pass (no double decoding), in the path only; undefined when there is none. */
export function unescapeSlashes(path: string): string | undefined {
  const [p, query] = splitQuery(path);
  if (!p.includes('%')) return undefined;
  const out = p.replace(/%(2f|5c)/gi, (m) => (m[1] === '2' ? '/' : '\\'));
  return out.length === p.length ? undefined : out + query;
}

/** Runs of `/` in the path as one, keeping a leading and a trailing one (backslashes are not slashes here). */
export function mergeSlashes(path: string): string {
  const [p, query] = splitQuery(path);
  if (!p.includes('//')) return path;
  const segments = p.split('/').filter((s) => s !== '');
  return `${p.startsWith('/') ? '/' : ''}${segments.join('/')}${p.endsWith('/') ? '/' : ''}${query}`;
}

const DOT = /^(?:\.|%2[eE])$/;
const DOT_DOT = /^(?:\.|%2[eE])(?:\.|%2[eE])$/;
/** Characters copied as they are; the rest of US-ASCII (controls, space, `"#%<>?\^`{|}`, DEL) and every byte above it are escaped. */
const PASS = /[A-Za-z0-9\-._~!$&'()*+,;=:@[\]/]/;
const UNRESERVED = /[A-Za-z0-9\-_~.]/;
const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * PathUtil::canonicalPath: the path before `?` through Chromium's CanonicalizePath (a `/` in
 * front if it has none; `\` is a separator, written `/`; `.` and `..` segments, also as `%2e`,
 * removed, never above the root; `%XX` of an unreserved character or `.` decoded, any other kept
 * as it came, hex case and all; a bad `%` kept; other characters that may not stand in a path
 * percent-encoded in upper case), after Envoy's stripping of parameters from dot segments
 * (`..;x` is `..`). NUL, raw or as `%00`, fails it (undefined: the request is a 400).
 */
export function canonicalPath(path: string): string | undefined {
  let [p, query] = splitQuery(path);
  if (p.includes('.;')) p = p.split('/').map((s) => (s.startsWith('..;') ? '..' : s.startsWith('.;') ? '.' : s)).join('/');
  const first = p.charCodeAt(0);
  const rest = first === 47 /* / */ || first === 92 /* \ */ ? p.slice(1) : p;
  const raw = rest.split(/[/\\]/);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const segment = raw[i]!;
    const last = i === raw.length - 1;
    if (DOT.test(segment)) {
      if (last) out.push('');
    } else if (DOT_DOT.test(segment)) {
      out.pop();
      if (last) out.push('');
    } else {
      const canonical = canonicalSegment(segment);
      if (canonical === undefined) return undefined;
      out.push(canonical);
    }
  }
  return `/${out.join('/')}${query}`;
}

function canonicalSegment(segment: string): string | undefined {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === '%') {
      const hex = segment.slice(i + 1, i + 3);
      if (!HEX.test(hex)) {
        out += '%';
        continue;
      }
      const value = Number.parseInt(hex, 16);
      if (value === 0) return undefined;
      const decoded = String.fromCharCode(value);
      out += UNRESERVED.test(decoded) ? decoded : `%${hex}`;
      i += 2;
    } else if (PASS.test(c)) {
      out += c;
    } else {
      const code = c.charCodeAt(0);
      if (code === 0) return undefined;
      for (const byte of code < 0x100 ? [code] : Buffer.from(c)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}

const BY_RUNTIME: Record<number, EscapedSlashesAction> = { 2: 'REJECT_REQUEST', 3: 'UNESCAPE_AND_REDIRECT', 4: 'UNESCAPE_AND_FORWARD' };

/**
 * A connection manager's path normalization, decided once when its configuration is built, as
 * Envoy's HttpConnectionManagerConfig does: normalize_path unset is the runtime percentage
 * `http_connection_manager.normalize_path` (0); path_with_escaped_slashes_action
 * IMPLEMENTATION_SPECIFIC_DEFAULT is the runtime integer
 * `http_connection_manager.path_with_escaped_slashes_action` (2 reject, 3 redirect, 4 forward,
 * else keep), all of it sampled by `http_connection_manager.path_with_escaped_slashes_action_enabled`
 * (100 %); a fragment is a 400 unless `envoy.reloadable_features.http_reject_path_with_fragment` is false.
 */
export function pathNormalizationOf(config: HttpConnectionManager): PathNormalization {
  const normalize = config.normalize_path === undefined ? featureEnabled('http_connection_manager.normalize_path', 0) : config.normalize_path === true;
  let escapedSlashes: EscapedSlashesAction = 'KEEP_UNCHANGED';
  if (featureEnabled('http_connection_manager.path_with_escaped_slashes_action_enabled', 100)) {
    const configured = config.path_with_escaped_slashes_action ?? 'IMPLEMENTATION_SPECIFIC_DEFAULT';
    escapedSlashes = configured === 'IMPLEMENTATION_SPECIFIC_DEFAULT' ? (BY_RUNTIME[runtimeInteger('http_connection_manager.path_with_escaped_slashes_action', 0)] ?? 'KEEP_UNCHANGED') : configured;
  }
  return { normalize, mergeSlashes: config.merge_slashes === true, escapedSlashes, rejectFragment: runtimeFeature('envoy.reloadable_features.http_reject_path_with_fragment', true) };
}
