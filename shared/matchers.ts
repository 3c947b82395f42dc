import type { IncomingHttpHeaders } from 'node:http';
import type { RE2JS } from 're2js';
import { re2 } from './re2.js';
import { obj } from './config/access.js';
import type { JsonObject } from './config/proto-json.js';
import { configError, type ConfigError } from './config/config-error.js';
import type { FractionDraw } from './runtime.js';

/**
 * Envoy's string and header matchers, compiled once: routes, the health-check filter and
 * access-log header filters all match requests the same way.
 */

type Obj = JsonObject;

/**
 * What matchers see of a request. `path` includes the query string, as Envoy's :path does. A tool
 * that explains a request may fix its random draws (see FractionDraw); a worker leaves them out.
 */
export interface RequestView extends FractionDraw {
  method: string;
  path: string;
  authority: string;
  headers: IncomingHttpHeaders;
}

export type HeaderMatcher = (rq: RequestView) => boolean;

function compileRegex(regex: string): RE2JS {
  return re2().compile(regex);
}

/** A StringMatcher (exact, prefix, suffix, contains, safe_regex; ignore_case). */
export function compileStringMatcher(m: Obj): (value: string) => boolean {
  const ignoreCase = m.ignore_case === true;
  const norm = (s: string) => (ignoreCase ? s.toLowerCase() : s);
  if (typeof m.exact === 'string') {
    const want = norm(m.exact);
    return (v) => norm(v) === want;
  }
  if (typeof m.prefix === 'string') {
    const want = norm(m.prefix);
    return (v) => norm(v).startsWith(want);
  }
  if (typeof m.suffix === 'string') {
    const want = norm(m.suffix);
    return (v) => norm(v).endsWith(want);
  }
  if (typeof m.contains === 'string') {
    const want = norm(m.contains);
    return (v) => norm(v).includes(want);
  }
  if (m.safe_regex) {
    const re = compileRegex(String(obj(m.safe_regex).regex));
    return (v) => re.matches(v);
  }
  return () => true;
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(',') : v;
}

/** A request header (a repeated one's values joined with commas), pseudo-headers included. */
export function requestHeader(rq: RequestView, name: string): string | undefined {
  switch (name) {
    case ':path': return rq.path;
    case ':method': return rq.method;
    case ':authority': return rq.authority;
    case ':scheme': return headerValue(rq.headers, ':scheme') ?? 'http';
    default: return headerValue(rq.headers, name);
  }
}

/** A route HeaderMatcher (also the health-check filter's). `:path` includes the query string, as in Envoy. */
export function compileHeaderMatcher(h: Obj): HeaderMatcher {
  const name = String(h.name);
  const invert = h.invert_match === true;
  const treatMissingAsEmpty = h.treat_missing_header_as_empty === true;
  // No specifier is a presence match, as present_match: true.
  const presence = specifiesValue(h) ? undefined : h.present_match !== false;
  let test: (value: string) => boolean;
  // A legacy empty exact_match matches any value (Envoy's HeaderData).
  if (typeof h.exact_match === 'string') test = (v) => h.exact_match === '' || v === h.exact_match;
  else if (h.safe_regex_match) {
    const re = compileRegex(String(obj(h.safe_regex_match).regex));
    test = (v) => re.matches(v);
  } else if (h.range_match) {
    const r = obj(h.range_match);
    const start = Number(r.start ?? 0);
    const end = Number(r.end ?? 0);
    test = (v) => /^[+-]?\d+$/.test(v) && Number(v) >= start && Number(v) < end;
  } else if (typeof h.prefix_match === 'string') test = (v) => v.startsWith(h.prefix_match as string);
  else if (typeof h.suffix_match === 'string') test = (v) => v.endsWith(h.suffix_match as string);
  else if (typeof h.contains_match === 'string') test = (v) => v.includes(h.contains_match as string);
  else if (h.string_match) test = compileStringMatcher(obj(h.string_match));
  else test = () => presence === true;
  return (rq) => {
    let v = requestHeader(rq, name);
    if (v === undefined) {
      // As Envoy's matchesHeaders: a missing header matches only a presence matcher that wants it
      // absent (present_match: false, or present_match: true inverted); value matchers, inverted or
      // not, never match it, unless treat_missing_header_as_empty makes it the empty value.
      if (!treatMissingAsEmpty) return presence !== undefined && presence === invert;
      v = '';
    }
    return test(v) !== invert;
  };
}

/** Whether a HeaderMatcher names a value to compare (otherwise it matches on presence). */
function specifiesValue(h: Obj): boolean {
  return typeof h.exact_match === 'string' || h.safe_regex_match !== undefined || h.range_match !== undefined || typeof h.prefix_match === 'string' || typeof h.suffix_match === 'string' || typeof h.contains_match === 'string' || h.string_match !== undefined;
}

/** A QueryParameterMatcher: the parameter's first value by its string_match, or its presence. */
export function compileQueryParameterMatcher(q: Obj): (rq: RequestView) => boolean {
  const name = String(q.name);
  const value = q.string_match !== undefined ? compileStringMatcher(obj(q.string_match)) : undefined;
  return (rq) => {
    const v = queryParameterValue(rq.path, name);
    return v !== undefined && (value === undefined ? q.present_match !== false : value(v));
  };
}

/** The first value of a query parameter in a request target, decoded; undefined when absent. */
export function queryParameterValue(path: string, name: string): string | undefined {
  const q = path.indexOf('?');
  if (q < 0) return undefined;
  for (const pair of path.slice(q + 1).split('&')) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (key !== name) continue;
    const raw = eq < 0 ? '' : pair.slice(eq + 1);
    try {
      return decodeURIComponent(raw.replace(/\+/g, ' '));
    } catch {
      return raw;
    }
  }
  return undefined;
}

/** A configured RE2 regex that does not compile, as a validation error naming its field. */
export function checkRegex(regex: unknown, path: string, errors: ConfigError[]): void {
  if (typeof regex !== 'string') return;
  try {
    re2().compile(regex);
  } catch (err) {
    errors.push(configError('invalid', path, `invalid RE2 regex '${regex}': ${(err as Error).message}`));
  }
}

/** RegexMatchAndSubstitute: every match of the pattern replaced; `\1` … name its groups, as in RE2. */
export function compileRegexSubstitution(r: Obj): (value: string) => string {
  const re = re2().compile(String(obj(r.pattern).regex));
  // RE2's substitution (`\1` a group, `\\` a backslash) in RE2JS's terms (`$1` a group, `$$` a dollar sign).
  const substitution = String(r.substitution ?? '')
    .replace(/\$/g, '$$$$')
    .replace(/\\(\d|\\)/g, (_m, c: string) => (c === '\\' ? '\\' : `$${c}`));
  return (value) => re.matcher(value).replaceAll(substitution);
}
