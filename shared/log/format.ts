import { LEVEL_NAMES, SHORT_LEVEL_NAMES } from './levels.js';

/**
 * spdlog pattern flags (the `--log-format` language), compiled once into an array of small
 * functions. Alignment specs work as in spdlog: `%8l` pads left, `%-8l` pads right, `%=8l`
 * centres. `%t` is the process's role and index (`main`, `worker_0`, `admin`): Node has no
 * threads, and a role says more than a pid (which `%P` prints).
 */

export interface LogRecord {
  level: number;
  logger: string;
  message: string;
  /** Milliseconds since the epoch, with sub-millisecond precision. */
  time: number;
  file: string;
  line: number;
  func: string;
}

export interface FormatContext {
  role: string;
  pid: number;
  escape: boolean;
}

type Part = (r: LogRecord, t: TimeParts, c: FormatContext) => string;

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

interface TimeParts {
  date: Date;
  sub: number; // fraction of the second, in ms (0 <= sub < 1000)
}

const p2 = (n: number) => (n < 10 ? '0' + n : String(n));
const p3 = (n: number) => String(n).padStart(3, '0');
const hour12 = (d: Date) => p2(d.getHours() % 12 || 12);
const ampm = (d: Date) => (d.getHours() < 12 ? 'AM' : 'PM');
const hms = (d: Date) => `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
const mdy = (d: Date) => `${p2(d.getMonth() + 1)}/${p2(d.getDate())}/${p2(d.getFullYear() % 100)}`;

function utcOffset(d: Date): string {
  const off = -d.getTimezoneOffset();
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off);
  return `${sign}${p2(Math.floor(abs / 60))}:${p2(abs % 60)}`;
}

/** C-style escaping of a message so that one entry cannot span several lines. */
export function escapeMessage(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '"') out += '\\"';
    else if (ch === "'") out += "\\'";
    else if (c < 0x20 || c === 0x7f) out += '\\' + c.toString(8).padStart(3, '0');
    else out += ch;
  }
  return out;
}

const FLAGS: Record<string, Part> = {
  v: (r, _t, c) => (c.escape ? escapeMessage(r.message) : r.message),
  t: (_r, _t, c) => c.role,
  P: (_r, _t, c) => String(c.pid),
  n: (r) => r.logger,
  l: (r) => LEVEL_NAMES[r.level] ?? '',
  L: (r) => SHORT_LEVEL_NAMES[r.level] ?? '',
  a: (_r, t) => DAYS[t.date.getDay()]!.slice(0, 3),
  A: (_r, t) => DAYS[t.date.getDay()]!,
  b: (_r, t) => MONTHS[t.date.getMonth()]!.slice(0, 3),
  h: (_r, t) => MONTHS[t.date.getMonth()]!.slice(0, 3),
  B: (_r, t) => MONTHS[t.date.getMonth()]!,
  c: (_r, t) => `${DAYS[t.date.getDay()]!.slice(0, 3)} ${MONTHS[t.date.getMonth()]!.slice(0, 3)} ${String(t.date.getDate()).padStart(2, ' ')} ${hms(t.date)} ${t.date.getFullYear()}`,
  C: (_r, t) => p2(t.date.getFullYear() % 100),
  Y: (_r, t) => String(t.date.getFullYear()),
  D: (_r, t) => mdy(t.date),
  x: (_r, t) => mdy(t.date),
  m: (_r, t) => p2(t.date.getMonth() + 1),
  d: (_r, t) => p2(t.date.getDate()),
  H: (_r, t) => p2(t.date.getHours()),
  I: (_r, t) => hour12(t.date),
  M: (_r, t) => p2(t.date.getMinutes()),
  S: (_r, t) => p2(t.date.getSeconds()),
  e: (_r, t) => p3(Math.floor(t.sub)),
  f: (_r, t) => String(Math.floor(t.sub * 1000)).padStart(6, '0'),
  // The clock has microsecond resolution; %F prints it in nanoseconds.
  F: (_r, t) => String(Math.floor(t.sub * 1000) * 1000).padStart(9, '0'),
  p: (_r, t) => ampm(t.date),
  r: (_r, t) => `${hour12(t.date)}:${p2(t.date.getMinutes())}:${p2(t.date.getSeconds())} ${ampm(t.date)}`,
  R: (_r, t) => `${p2(t.date.getHours())}:${p2(t.date.getMinutes())}`,
  T: (_r, t) => hms(t.date),
  X: (_r, t) => hms(t.date),
  z: (_r, t) => utcOffset(t.date),
  E: (_r, t) => String(Math.floor(t.date.getTime() / 1000)),
  '%': () => '%',
  '@': (r) => (r.line ? `${r.file}:${r.line}` : r.file),
  s: (r) => r.file.slice(r.file.lastIndexOf('/') + 1),
  g: (r) => r.file,
  '#': (r) => (r.line ? String(r.line) : ''),
  '!': (r) => r.func,
};

/** Flags whose value needs the caller's line or function (a stack capture per emitted line). */
const CALL_SITE_FLAGS = new Set(['@', '#', '!']);

export interface CompiledFormat {
  format(record: LogRecord, ctx: FormatContext): string;
  needsCallSite: boolean;
}

export function compileFormat(pattern: string, { prefixWithLocation }: { prefixWithLocation: boolean } = { prefixWithLocation: false }): CompiledFormat {
  const source = prefixWithLocation ? pattern.replaceAll('%v', '[%g:%#] %v') : pattern;
  const parts: (string | Part)[] = [];
  let needsCallSite = false;
  let literal = '';
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    if (ch !== '%' || i === source.length - 1) {
      literal += ch;
      continue;
    }
    const m = /^([-=]?)(\d*)(.)/.exec(source.slice(i + 1));
    const flag = m?.[3];
    const part = flag !== undefined ? FLAGS[flag] : undefined;
    if (!m || !part) {
      // spdlog prints unknown flags verbatim
      literal += ch;
      continue;
    }
    if (literal) parts.push(literal);
    literal = '';
    if (CALL_SITE_FLAGS.has(flag!)) needsCallSite = true;
    const width = m[2] ? Number(m[2]) : 0;
    const align = m[1];
    parts.push(width === 0 ? part : (r, t, c) => pad(part(r, t, c), width, align ?? ''));
    i += m[0].length;
  }
  if (literal) parts.push(literal);
  return {
    needsCallSite,
    format(record, ctx) {
      const ms = Math.floor(record.time);
      const time: TimeParts = { date: new Date(ms), sub: (ms % 1000) + (record.time - ms) };
      let out = '';
      for (const part of parts) out += typeof part === 'string' ? part : part(record, time, ctx);
      return out;
    },
  };
}

function pad(s: string, width: number, align: string): string {
  if (s.length >= width) return s;
  if (align === '-') return s.padEnd(width);
  if (align === '=') {
    const left = Math.floor((width - s.length) / 2);
    return ' '.repeat(left) + s + ' '.repeat(width - s.length - left);
  }
  return s.padStart(width);
}

export const DEFAULT_LOG_FORMAT = '[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v';
