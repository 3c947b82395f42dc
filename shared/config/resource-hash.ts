import { cryptoModule } from '../builtins.js';
import type { JsonObject } from './proto-json.js';

/**
 * Whether two versions of a resource are the same, as Envoy decides it (MessageUtil::hash over
 * the message's deterministic serialization): the canonical JSON with every object's keys in one
 * order, so that a map or a Struct whose entries arrive in another order (a Go control plane's
 * maps come in any order) is not taken for a change that would drain a listener or rebuild a
 * cluster.
 */

/** `value` as JSON text with the keys of every object sorted; arrays keep their order. */
export function canonicalText(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalText).join(',')}]`;
  const o = value as JsonObject;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalText(o[k])}`).join(',')}}`;
}

const hashes = new WeakMap<object, string>();

/** The SHA-256 of a resource's canonical text, computed once per message object. */
export function resourceHash(message: object): string {
  let hash = hashes.get(message);
  if (hash === undefined) {
    hash = cryptoModule().createHash('sha256').update(canonicalText(message)).digest('hex');
    hashes.set(message, hash);
  }
  return hash;
}

/** Two versions of a resource are the same resource. */
export function sameResource(a: object, b: object): boolean {
  return a === b || resourceHash(a) === resourceHash(b);
}
