/** Number formats of Envoy's stats output (C's printf, where JavaScript's differs). */

/** Shortest round-trip decimal; `nan` and `inf` as Envoy prints them; exponent form from 1e16. */
export function formatDouble(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  if (Math.abs(v) >= 1e16) return v.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return String(v);
}

/** C's `%g`: 6 significant digits, trailing zeros stripped, exponent form with two digits. */
export function formatG(v: number): string {
  if (v === 0) return '0';
  const exponent = Math.floor(Math.log10(Math.abs(v)));
  if (exponent < -4 || exponent >= 6) {
    const [mantissa, exp] = v.toExponential(5).split('e') as [string, string];
    const m = mantissa.includes('.') ? mantissa.replace(/0+$/, '').replace(/\.$/, '') : mantissa;
    const sign = exp.startsWith('-') ? '-' : '+';
    return `${m}e${sign}${exp.replace(/^[+-]/, '').padStart(2, '0')}`;
  }
  const fixed = v.toPrecision(6);
  return fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
}

/** C's `%.32g` (Prometheus bounds and sums): up to 32 significant digits, trailing zeros stripped. */
export function formatG32(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (v === 0) return '0';
  const exponent = Math.floor(Math.log10(Math.abs(v)));
  if (exponent < -4 || exponent >= 32) {
    const [mantissa, exp] = v.toExponential(31).split('e') as [string, string];
    const m = mantissa.replace(/0+$/, '').replace(/\.$/, '');
    const sign = exp.startsWith('-') ? '-' : '+';
    return `${m}e${sign}${exp.replace(/^[+-]/, '').padStart(2, '0')}`;
  }
  const fixed = v.toPrecision(32);
  return fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
}

/** Quantile labels: P0 P25 … P99.5 P99.9 P100 (the quantile ×100, printed with %g). */
export function percentLabel(q: number): string {
  return `P${formatG(q * 100)}`;
}
