/**
 * Bounds on a parsed configuration document, checked before anything walks it. YAML aliases let a
 * 2 KB file stand for billions of values (every reader after the parser would expand them: the
 * "billion laughs"), and a deeply nested file overflows the stack of any recursive reader. Envoy
 * leans on Protocol Buffers' recursion limit of 100; this proxy applies the same depth to every
 * format, and caps the expanded size far above any real bootstrap (tens of thousands of clusters
 * come to a few million values).
 */

export const MAX_DEPTH = 100;
export const MAX_VALUES = 10_000_000;
/**
 * The expanded document's size (its strings and keys, 8 bytes for any other value): a 1 MB string
 * that aliases repeat 10,000 times is few values but 10 GB, more than the process can hand its
 * children (and more than a JavaScript string can hold).
 */
export const MAX_BYTES = 256 * 1024 * 1024;

interface Extent {
  /** Values in the subtree once every alias is expanded. */
  values: number;
  /** Their size, as MAX_BYTES counts it. */
  bytes: number;
  /** Levels below and including this one. */
  height: number;
}

/**
 * Why `doc` is refused, or undefined when it is within bounds. Shared subtrees (YAML aliases) are
 * measured once and counted each time they are used, so a bomb is refused in microseconds; the
 * walk stops descending past MAX_DEPTH, so it cannot overflow the stack itself.
 */
export function documentLimitError(doc: unknown, maxValues = MAX_VALUES): string | undefined {
  const measured = new Map<object, Extent>();
  /** Marks an object still being measured: meeting it again means it contains itself. */
  const OPEN: Extent = { values: 0, bytes: 0, height: 0 };
  /** Whether a shared subtree (a YAML alias) was met: the refusals say so only then. */
  let aliased = false;
  const path: (string | number)[] = [];
  const where = () => {
    const shown = path.slice(0, 6).map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('').replace(/^\./, '');
    return path.length > 6 ? `${shown}…` : shown;
  };

  class Refusal extends Error {}
  const tooLarge = () => (aliased ? ' once its YAML aliases are expanded (a "billion laughs"?)' : '');
  const measure = (value: object, depth: number): Extent => {
    const known = measured.get(value);
    if (known === OPEN) throw new Refusal(`a YAML alias refers to a value that contains it (at ${where()})`);
    if (known) {
      aliased = true;
      if (depth + known.height - 1 > MAX_DEPTH) throw new Refusal(`nested deeper than ${MAX_DEPTH} levels (at ${where() || 'the top'})`);
      return known;
    }
    if (depth > MAX_DEPTH) throw new Refusal(`nested deeper than ${MAX_DEPTH} levels (at ${where()})`);
    measured.set(value, OPEN);
    const extent: Extent = { values: 1, bytes: 8, height: 1 };
    const add = (key: string | number, child: unknown) => {
      if (typeof key === 'string') extent.bytes += key.length;
      if (child === null || typeof child !== 'object') {
        // A scalar, counted here (no walk, no allocation).
        extent.values += 1;
        extent.bytes += typeof child === 'string' ? child.length : 8;
        if (extent.height < 2) extent.height = 2;
      } else {
        path.push(key);
        const c = measure(child, depth + 1);
        path.pop();
        extent.values += c.values;
        extent.bytes += c.bytes;
        if (c.height + 1 > extent.height) extent.height = c.height + 1;
      }
      if (extent.values > maxValues) throw new Refusal(`has more than ${maxValues.toLocaleString('en-US')} values${tooLarge()}`);
      if (extent.bytes > MAX_BYTES) throw new Refusal(`is larger than ${MAX_BYTES / (1024 * 1024)} MiB${tooLarge()}`);
    };
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) add(i, value[i]);
    else for (const key in value) add(key, (value as Record<string, unknown>)[key]);
    measured.set(value, extent);
    return extent;
  };
  try {
    if (doc !== null && typeof doc === 'object') measure(doc, 1);
    return undefined;
  } catch (err) {
    if (err instanceof Refusal) return err.message;
    throw err;
  }
}
