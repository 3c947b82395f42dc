/**
 * A decimal number as absl's SimpleAtof / SimpleAtod read one (what Envoy parses q-values and
 * header values with): an optional sign, digits with an optional fraction, an optional exponent,
 * no hexadecimal, no blank. Undefined for anything else.
 */
export function parseDecimal(text: string): number | undefined {
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : undefined;
}

/** A header value as absl's SimpleAtoi reads an unsigned one (blanks around it allowed): digits only. */
export function unsigned(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const t = value.trim();
  return /^\+?\d+$/.test(t) ? Number(t) : undefined;
}

/** Whether `n` is a prime number (a Maglev table's size must be). */
export function isPrime(n: number): boolean {
  if (!Number.isInteger(n) || n < 2) return false;
  for (let d = 2; d * d <= n; d++) if (n % d === 0) return false;
  return true;
}
