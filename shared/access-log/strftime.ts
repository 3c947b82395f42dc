import { ConfigFault } from '../config/config-error.js';
/**
 * `%START_TIME(<format>)%`: a strftime-style format applied in UTC, as Envoy prints start times,
 * with Envoy's additions for sub-second precision: `%E<n>S` (seconds with n fractional digits),
 * `%f` (nine fractional digits) and `%<n>f` (n of them), and `%s` (seconds since the epoch).
 * A conversion this proxy does not know is a configuration error rather than text copied
 * through, so that a format never silently prints something else than asked.
 */

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

type Part = string | ((d: Date, nanos: string) => string);

const pad = (n: number, width = 2, fill = '0') => String(n).padStart(width, fill);

const SIMPLE: Record<string, (d: Date) => string> = {
  Y: (d) => String(d.getUTCFullYear()),
  C: (d) => pad(Math.floor(d.getUTCFullYear() / 100)),
  y: (d) => pad(d.getUTCFullYear() % 100),
  m: (d) => pad(d.getUTCMonth() + 1),
  d: (d) => pad(d.getUTCDate()),
  e: (d) => pad(d.getUTCDate(), 2, ' '),
  j: (d) => pad(Math.floor((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1, 3),
  H: (d) => pad(d.getUTCHours()),
  I: (d) => pad(d.getUTCHours() % 12 || 12),
  M: (d) => pad(d.getUTCMinutes()),
  S: (d) => pad(d.getUTCSeconds()),
  p: (d) => (d.getUTCHours() < 12 ? 'AM' : 'PM'),
  a: (d) => DAYS[d.getUTCDay()]!.slice(0, 3),
  A: (d) => DAYS[d.getUTCDay()]!,
  b: (d) => MONTHS[d.getUTCMonth()]!.slice(0, 3),
  h: (d) => MONTHS[d.getUTCMonth()]!.slice(0, 3),
  B: (d) => MONTHS[d.getUTCMonth()]!,
  u: (d) => String(d.getUTCDay() || 7),
  w: (d) => String(d.getUTCDay()),
  s: (d) => String(Math.floor(d.getTime() / 1000)),
  z: () => '+0000',
  Z: () => 'UTC',
  n: () => '\n',
  t: () => '\t',
  '%': () => '%',
};

const COMPOSITE: Record<string, string> = { T: '%H:%M:%S', F: '%Y-%m-%d', D: '%m/%d/%y', R: '%H:%M', r: '%I:%M:%S %p' };

/** Compiles `format`; throws naming the first conversion it cannot print. */
export function compileStrftime(format: string): (ms: number, subMsNanos?: number) => string {
  const parts: Part[] = [];
  let literal = '';
  const flush = () => {
    if (literal) parts.push(literal);
    literal = '';
  };
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%') {
      literal += c;
      continue;
    }
    const rest = format.slice(i + 1);
    let m: RegExpExecArray | null;
    if ((m = /^E(\d)S/.exec(rest))) {
      const digits = Number(m[1]);
      flush();
      parts.push((d, nanos) => `${pad(d.getUTCSeconds())}${digits ? '.' + nanos.slice(0, digits) : ''}`);
      i += m[0].length;
    } else if ((m = /^([1-9]?)f/.exec(rest))) {
      const digits = m[1] ? Number(m[1]) : 9;
      flush();
      parts.push((_d, nanos) => nanos.slice(0, digits));
      i += m[0].length;
    } else if (rest[0] !== undefined && COMPOSITE[rest[0]]) {
      flush();
      const inner = compileStrftime(COMPOSITE[rest[0]]!);
      parts.push((d) => inner(d.getTime()));
      i += 1;
    } else if (rest[0] !== undefined && SIMPLE[rest[0]]) {
      flush();
      parts.push(SIMPLE[rest[0]]!);
      i += 1;
    } else {
      throw new ConfigFault('unsupported', `START_TIME: unsupported time format conversion '%${rest[0] ?? ''}' in '${format}'`);
    }
  }
  flush();
  return (ms, subMsNanos = 0) => {
    const d = new Date(ms);
    const nanos = pad((Math.floor(ms) % 1000) * 1_000_000 + subMsNanos, 9);
    let out = '';
    for (const p of parts) out += typeof p === 'string' ? p : p(d, nanos);
    return out;
  };
}
