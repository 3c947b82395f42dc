/**
 * `JSON.stringify(value, replacer, 1)` (the admin's JSON layout) as chunks of about 64 KiB, so
 * that a /config_dump of 6,000 clusters or a /clusters?format=json is written as the client takes
 * it and the admin answers /ready between chunks (admin/server.ts yields after each). The
 * outer levels are walked here; below STRUCTURAL_DEPTH, each value is one JSON.stringify.
 */

const CHUNK = 64 * 1024;
/**
 * Deep enough to reach each element of the large arrays: /config_dump's configs[] → the bootstrap
 * dump → bootstrap → static_resources → clusters[] → one cluster (depth 6), and /clusters'
 * cluster_statuses[] → one cluster → host_statuses[].
 */
const STRUCTURAL_DEPTH = 6;

export type Replacer = (this: unknown, key: string, value: unknown) => unknown;

const identity: Replacer = (_key, value) => value;

function isContainer(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}

/** Values JSON leaves out of an object (and writes as null in an array). */
function omitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

export function* jsonChunks(value: unknown, replacer: Replacer = identity): Generator<string> {
  let out = '';
  /** As JSON.stringify does before writing a value: its toJSON, then the replacer. */
  const prepare = (holder: unknown, key: string, raw: unknown): unknown => {
    const v = isContainer(raw) && typeof (raw as { toJSON?: unknown }).toJSON === 'function' ? (raw as { toJSON: (k: string) => unknown }).toJSON(key) : raw;
    return replacer.call(holder, key, v);
  };
  /** One prepared value (not omitted) at `depth`. */
  function* write(v: unknown, depth: number): Generator<string> {
    if (!isContainer(v) || depth >= STRUCTURAL_DEPTH) {
      // The replacer sees the value again under the key '' (a replacer must let that be).
      const text = JSON.stringify(v, replacer === identity ? undefined : replacer, 1);
      out += depth ? text.replaceAll('\n', `\n${' '.repeat(depth)}`) : text;
      return;
    }
    const inner = ' '.repeat(depth + 1);
    const isArray = Array.isArray(v);
    let first = true;
    out += isArray ? '[' : '{';
    for (const [key, raw] of isArray ? v.map((e, i) => [String(i), e] as const) : Object.entries(v)) {
      let e = prepare(v, key, raw);
      if (omitted(e)) {
        if (!isArray) continue;
        e = null;
      }
      out += `${first ? '' : ','}\n${inner}${isArray ? '' : `${JSON.stringify(key)}: `}`;
      first = false;
      yield* write(e, depth + 1);
      if (out.length > CHUNK) {
        yield out;
        out = '';
      }
    }
    out += first ? (isArray ? ']' : '}') : `\n${' '.repeat(depth)}${isArray ? ']' : '}'}`;
  }
  const top = prepare({ '': value }, '', value);
  if (!omitted(top)) yield* write(top, 0);
  if (out) yield out;
}
