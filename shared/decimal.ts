/**
 * A decimal number as absl's SimpleAtof / SimpleAtod read one (what Envoy parses q-values and
 * header values with): an optional sign, digits with an optional fraction, an optional exponent,
 * no hexadecimal, no blank. Undefined for anything else.
 */
export function parseDecimal(text: string): number | undefined {
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : undefined;
}
