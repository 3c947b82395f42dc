/**
 * Bytes as a UTF-8 string, each byte that does not begin a well-formed sequence replaced by `!`
 * (Envoy's MessageUtil::sanitizeUtf8String: the value keeps its length in bytes).
 */
export function sanitizeUtf8(b: Uint8Array): string {
  let out = '';
  let start = 0;
  let i = 0;
  const flush = (end: number) => {
    if (end > start) out += Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('utf8');
  };
  while (i < b.length) {
    const n = sequenceLength(b, i);
    if (n > 0) {
      i += n;
      continue;
    }
    flush(i);
    out += '!';
    i += 1;
    start = i;
  }
  flush(i);
  return out;
}

/** The length of the well-formed sequence at `i`, or 0 (overlong forms, surrogates and past U+10FFFF are not). */
function sequenceLength(b: Uint8Array, i: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && b[i + k]! >= lo && b[i + k]! <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c === 0xee || c === 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (c === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}
