import { list, obj } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { durationMs } from '../config/wkt.js';
import { compileRegexSubstitution, queryParameterValue, type RequestView } from '../matchers.js';
import { xxHash64 } from '../hashing.js';

/**
 * A route's hash_policy, as Envoy's: each policy that finds its value adds its xxHash64 to the
 * request's hash (the hash so far rotated left one bit, then XORed, so that two equal policies do
 * not cancel out); a `terminal` one that found a value ends the list. The hash picks the host of
 * a RING_HASH or MAGLEV cluster. Policies: a header (its values sorted, each hash seeding the
 * next; `regex_rewrite` first), a cookie (generated with `ttl` when absent: the client gets it
 * with Set-Cookie), the client's IP (`connection_properties.source_ip`), a query parameter.
 */

export interface HashInput {
  rq: RequestView;
  /** The client's address as the connection manager determined it. */
  remoteIp: string;
  /** `ip:port` of the client and of the listener, for generated cookies. */
  remoteAddress: string;
  localAddress: string;
}

export interface HashResult {
  hash: bigint | undefined;
  /** Set-Cookie values for cookies the policy generated. */
  setCookies: string[];
}

type Method = (input: HashInput, setCookies: string[]) => bigint | undefined;

const MASK = (1n << 64n) - 1n;

function headerMethod(h: JsonObject): Method {
  const name = String(h.header_name).toLowerCase();
  const rewriteFn = h.regex_rewrite !== undefined ? compileRegexSubstitution(obj(h.regex_rewrite)) : undefined;
  return ({ rq }) => {
    const raw = name === ':authority' || name === 'host' ? rq.authority : name === ':path' ? rq.path : name === ':method' ? rq.method : rq.headers[name];
    if (raw === undefined) return undefined;
    const values = (Array.isArray(raw) ? raw : [raw]).map((v) => (rewriteFn ? rewriteFn(v) : v)).sort();
    let hash = 0n;
    for (const v of values) hash = xxHash64(v, hash);
    return hash;
  };
}

function cookieValue(header: string | string[] | undefined, name: string): string | undefined {
  for (const line of [header ?? []].flat()) {
    for (const part of line.split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    }
  }
  return undefined;
}

function cookieMethod(c: JsonObject): Method {
  const name = String(c.name);
  const ttlS = typeof c.ttl === 'string' ? Math.floor(durationMs(c.ttl) / 1000) : undefined;
  const path = typeof c.path === 'string' ? c.path : '';
  const attributes = list(c.attributes).map((a) => `; ${String(a.name)}${a.value !== undefined && a.value !== '' ? `=${String(a.value)}` : ''}`).join('');
  return (input, setCookies) => {
    const value = cookieValue(input.rq.headers.cookie, name);
    if (value) return xxHash64(value);
    if (ttlS === undefined) return undefined;
    // As Envoy: the same value for every request of the connection.
    const generated = xxHash64(input.remoteAddress + input.localAddress).toString(16).padStart(16, '0');
    setCookies.push(`${name}="${generated}"${ttlS > 0 ? `; Max-Age=${ttlS}` : ''}${path ? `; Path=${path}` : ''}${attributes}; HttpOnly`);
    return xxHash64(generated);
  };
}

function methodOf(p: JsonObject): Method {
  if (p.header !== undefined) return headerMethod(obj(p.header));
  if (p.cookie !== undefined) return cookieMethod(obj(p.cookie));
  if (p.connection_properties !== undefined) return obj(p.connection_properties).source_ip === true ? ({ remoteIp }) => (remoteIp ? xxHash64(remoteIp) : undefined) : () => undefined;
  if (p.query_parameter !== undefined) {
    const name = String(obj(p.query_parameter).name);
    return ({ rq }) => {
      const v = queryParameterValue(rq.path, name);
      return v === undefined ? undefined : xxHash64(v);
    };
  }
  // The loader refuses the others by name (filter_state).
  throw new Error(`hash policy ${Object.keys(p).join(', ')} is not supported`);
}

export type HashPolicy = (input: HashInput) => HashResult;

export function compileHashPolicy(policies: unknown): HashPolicy | undefined {
  const compiled = list(policies).map((p) => ({ method: methodOf(p), terminal: p.terminal === true }));
  if (compiled.length === 0) return undefined;
  return (input) => {
    const setCookies: string[] = [];
    let hash: bigint | undefined;
    for (const { method, terminal } of compiled) {
      const h = method(input, setCookies);
      if (h !== undefined) hash = hash === undefined ? h : (((hash << 1n) | (hash >> 63n)) & MASK) ^ h;
      if (terminal && hash !== undefined) break;
    }
    return { hash, setCookies };
  };
}
