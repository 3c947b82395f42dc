import type protobuf from 'protobufjs';
import type { RE2JS } from 're2js';
import { re2 } from '../re2.js';
import { durationNanos, parseDuration } from './wkt.js';
import { configError, type ConfigError } from './config-error.js';

/**
 * Envoy enforces the protoc-gen-validate annotations of its API at load time ("Proto constraint
 * validation failed"). protobufjs keeps them as flattened field options such as
 * `(validate.rules).string.min_len`; this module evaluates the rule kinds that Envoy's API uses.
 * Messages follow PGV's wording so that operators recognise them.
 */

type Rules = Record<string, unknown>;
const PREFIX = '(validate.rules).';
const rulesCache = new WeakMap<protobuf.Field, Rules | null>();

/** The field's rules with the `(validate.rules).` prefix removed, or null when it has none. */
export function fieldRules(field: protobuf.Field): Rules | null {
  let rules = rulesCache.get(field);
  if (rules !== undefined) return rules;
  rules = null;
  for (const [k, v] of Object.entries(field.options ?? {})) {
    if (!k.startsWith(PREFIX)) continue;
    rules ??= {};
    rules[k.slice(PREFIX.length)] = v;
  }
  rulesCache.set(field, rules);
  return rules;
}

export function oneofRequired(oneof: protobuf.OneOf): boolean {
  return oneof.options?.['(validate.required)'] === true;
}

/** The rules under a prefix, re-rooted: `subRules(r, 'repeated.items.')` turns `repeated.items.string.x` into `string.x`. */
function subRules(rules: Rules, prefix: string): Rules | null {
  let out: Rules | null = null;
  for (const [k, v] of Object.entries(rules)) {
    if (!k.startsWith(prefix)) continue;
    out ??= {};
    out[k.slice(prefix.length)] = v;
  }
  return out;
}

const headerNameRe = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/;
const patternCache = new Map<string, RE2JS>();

function checkString(rules: Rules, kind: string, s: string, fail: (msg: string) => void): void {
  const r = (name: string) => rules[`${kind}.${name}`];
  if (r('ignore_empty') === true && s.length === 0) return;
  const chars = [...s].length;
  const bytes = Buffer.byteLength(s);
  const minLen = r('min_len');
  if (typeof minLen === 'number' && chars < minLen) fail(`value length must be at least ${minLen} characters`);
  const maxLen = r('max_len');
  if (typeof maxLen === 'number' && chars > maxLen) fail(`value length must be at most ${maxLen} characters`);
  const minBytes = r('min_bytes');
  if (typeof minBytes === 'number' && bytes < minBytes) fail(`value length must be at least ${minBytes} bytes`);
  const maxBytes = r('max_bytes');
  if (typeof maxBytes === 'number' && bytes > maxBytes) fail(`value length must be at most ${maxBytes} bytes`);
  const prefix = r('prefix');
  if (typeof prefix === 'string' && !s.startsWith(prefix)) fail(`value does not have prefix "${prefix}"`);
  const suffix = r('suffix');
  if (typeof suffix === 'string' && !s.endsWith(suffix)) fail(`value does not have suffix "${suffix}"`);
  const inList = r('in');
  if (inList !== undefined) {
    const allowed = Array.isArray(inList) ? inList : [inList];
    if (!allowed.includes(s)) fail(`value must be in list [${allowed.join(', ')}]`);
  }
  const notIn = r('not_in');
  if (notIn !== undefined) {
    const banned = Array.isArray(notIn) ? notIn : [notIn];
    if (banned.includes(s)) fail(`value must not be in list [${banned.join(', ')}]`);
  }
  const pattern = r('pattern');
  if (typeof pattern === 'string') {
    let re = patternCache.get(pattern);
    if (!re) patternCache.set(pattern, (re = re2().compile(pattern)));
    if (!re.matcher(s).find()) fail(`value does not match regex pattern "${pattern}"`);
  }
  const wellKnown = r('well_known_regex');
  if (wellKnown !== undefined && s.length > 0) {
    // With `strict: false` (all of Envoy's uses) only NUL, CR and LF are refused.
    const strict = r('strict') !== false;
    if (/[\0\r\n]/.test(s)) fail('value must be a valid HTTP header ' + (wellKnown === 'HTTP_HEADER_NAME' ? 'name' : 'value'));
    else if (strict && wellKnown === 'HTTP_HEADER_NAME' && !headerNameRe.test(s)) fail('value must be a valid HTTP header name');
  }
}

function checkNumber(rules: Rules, kind: string, n: number, fail: (msg: string) => void): void {
  const r = (name: string) => rules[`${kind}.${name}`];
  const constant = r('const');
  if (typeof constant === 'number' && n !== constant) fail(`value must equal ${constant}`);
  const gt = r('gt');
  const gte = r('gte');
  const lt = r('lt');
  const lte = r('lte');
  const low = typeof gt === 'number' ? `(${gt}` : typeof gte === 'number' ? `[${gte}` : undefined;
  const high = typeof lt === 'number' ? `${lt})` : typeof lte === 'number' ? `${lte}]` : undefined;
  const bad =
    (typeof gt === 'number' && !(n > gt)) ||
    (typeof gte === 'number' && !(n >= gte)) ||
    (typeof lt === 'number' && !(n < lt)) ||
    (typeof lte === 'number' && !(n <= lte));
  if (bad) {
    if (low && high) fail(`value must be inside range ${low}, ${high}`);
    else if (typeof gt === 'number') fail(`value must be greater than ${gt}`);
    else if (typeof gte === 'number') fail(`value must be greater than or equal to ${gte}`);
    else if (typeof lt === 'number') fail(`value must be less than ${lt}`);
    else fail(`value must be less than or equal to ${lte}`);
  }
  const inList = r('in');
  if (inList !== undefined) {
    const allowed = (Array.isArray(inList) ? inList : [inList]) as number[];
    if (!allowed.includes(n)) fail(`value must be in list [${allowed.join(', ')}]`);
  }
  const notIn = r('not_in');
  if (notIn !== undefined) {
    const banned = (Array.isArray(notIn) ? notIn : [notIn]) as number[];
    if (banned.includes(n)) fail(`value must not be in list [${banned.join(', ')}]`);
  }
}

function checkDuration(rules: Rules, text: string, fail: (msg: string) => void): void {
  const parts = parseDuration(text);
  if (!parts) return;
  const value = durationNanos(parts);
  // A bound given as an empty message (`gt: {}`) is zero, as PGV reads it.
  const bound = (name: string): bigint | undefined => {
    const s = rules[`duration.${name}.seconds`];
    const n = rules[`duration.${name}.nanos`];
    if (s === undefined && n === undefined && rules[`duration.${name}`] === undefined) return undefined;
    return BigInt(Number(s ?? 0)) * 1_000_000_000n + BigInt(Number(n ?? 0));
  };
  const show = (ns: bigint) => `${Number(ns) / 1e9}s`;
  const gt = bound('gt');
  const gte = bound('gte');
  const lt = bound('lt');
  const lte = bound('lte');
  if (gt !== undefined && !(value > gt)) fail(`value must be greater than ${show(gt)}`);
  if (gte !== undefined && !(value >= gte)) fail(`value must be greater than or equal to ${show(gte)}`);
  if (lt !== undefined && !(value < lt)) fail(`value must be less than ${show(lt)}`);
  if (lte !== undefined && !(value <= lte)) fail(`value must be less than or equal to ${show(lte)}`);
}

const numericKinds = [
  'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64',
  'sfixed32', 'sfixed64', 'double', 'float', 'uintN',
];

const kindCache = new WeakMap<Rules, Set<string>>();

/** The rule kinds present (`string`, `uint32`, `duration`, …), computed once per rules object. */
function kindsOf(rules: Rules): Set<string> {
  let kinds = kindCache.get(rules);
  if (!kinds) {
    kinds = new Set(Object.keys(rules).map((k) => k.slice(0, k.indexOf('.'))));
    kindCache.set(rules, kinds);
  }
  return kinds;
}

/** Checks one (non-repeated) value against rules rooted at its kind (`string.`, `uint32.`, …). */
function checkValue(rules: Rules, value: unknown, fail: (msg: string) => void, enumDefined?: (n: number) => boolean): void {
  const kinds = kindsOf(rules);
  if (typeof value === 'string') {
    if (kinds.has('duration')) checkDuration(rules, value, fail);
    if (kinds.has('string')) checkString(rules, 'string', value, fail);
    if (kinds.has('bytes')) {
      const len = Buffer.from(value, 'base64').length;
      const min = rules['bytes.min_len'];
      const max = rules['bytes.max_len'];
      if (typeof min === 'number' && len < min) fail(`value length must be at least ${min} bytes`);
      if (typeof max === 'number' && len > max) fail(`value length must be at most ${max} bytes`);
    }
    // enum values are normalised to their names; `enum.in`/`not_in` compare numbers
  }
  if (typeof value === 'number') {
    for (const kind of numericKinds) if (kinds.has(kind)) checkNumber(rules, kind, value, fail);
    if (rules['enum.defined_only'] === true && enumDefined && !enumDefined(value)) fail('value must be one of the defined enum values');
  }
  if (typeof value === 'boolean') {
    const constant = rules['bool.const'];
    if (typeof constant === 'boolean' && value !== constant) fail(`value must equal ${constant}`);
  }
}

/** An enum's `in` and `not_in` (by number, as PGV compares them). */
function checkEnumLists(rules: Rules, n: number, fail: (msg: string) => void): void {
  const notIn = rules['enum.not_in'];
  if (notIn !== undefined && [notIn].flat().includes(n)) fail(`value must not be in list [${[notIn].flat().join(', ')}]`);
  const inList = rules['enum.in'];
  if (inList !== undefined && ![inList].flat().includes(n)) fail(`value must be in list [${[inList].flat().join(', ')}]`);
}

/**
 * Evaluates a field's PGV rules; each violation is added to `errors` as `<path>: <message>`.
 * `value` is the normalised value (undefined when absent); `enumNumber` the numeric value of
 * an enum field (normalised enums are names). Absent singular scalars are checked at their
 * default value, as PGV does.
 */
export function checkFieldRules(field: protobuf.Field, value: unknown, enumNumber: number | number[] | undefined, path: string, errors: ConfigError[]): void {
  const rules = fieldRules(field);
  if (!rules) return;
  const fail = (msg: string) => errors.push(configError('constraint', path, msg));
  const isMessage = field.resolvedType !== null && !('values' in (field.resolvedType as object));
  if (value === undefined) {
    // A oneof member's rules apply only when that member is the one set.
    if (field.partOf) return;
    if (rules['message.required'] === true || rules['any.required'] === true || rules['duration.required'] === true || rules['timestamp.required'] === true) {
      fail('value is required');
    }
    if (field.repeated || field.map) {
      const min = rules['repeated.min_items'] ?? rules['map.min_pairs'];
      if (typeof min === 'number' && min > 0) fail(`value must contain at least ${min} item(s)`);
      return;
    }
    // PGV checks scalars even when unset (at their default), but not messages; an unset enum is its value 0.
    if (isMessage) return;
    const defaultValue = field.type === 'string' || field.type === 'bytes' ? '' : field.type === 'bool' ? false : 0;
    checkValue(rules, defaultValue, fail, () => true);
    if (field.resolvedType && 'values' in (field.resolvedType as object)) checkEnumLists(rules, 0, fail);
    return;
  }
  if (field.map) {
    const entries = Object.keys(value as object);
    const min = rules['map.min_pairs'];
    const max = rules['map.max_pairs'];
    if (typeof min === 'number' && entries.length < min) fail(`value must contain at least ${min} pair(s)`);
    if (typeof max === 'number' && entries.length > max) fail(`value must contain no more than ${max} pair(s)`);
    const keyRules = subRules(rules, 'map.keys.');
    if (keyRules) for (const k of entries) checkValue(keyRules, k, (m) => fail(`map key '${k}': ${m}`));
    return;
  }
  if (field.repeated) {
    const items = value as unknown[];
    const min = rules['repeated.min_items'];
    const max = rules['repeated.max_items'];
    if (typeof min === 'number' && items.length < min) fail(`value must contain at least ${min} item(s)`);
    if (typeof max === 'number' && items.length > max) fail(`value must contain no more than ${max} item(s)`);
    if (rules['repeated.unique'] === true && new Set(items.map((i) => JSON.stringify(i))).size !== items.length) {
      fail('repeated value must contain unique items');
    }
    const each = subRules(rules, 'repeated.items.');
    if (each) {
      const numbers = Array.isArray(enumNumber) ? enumNumber : [];
      const enumType = field.resolvedType as protobuf.Enum | null;
      items.forEach((item, i) => {
        const v = typeof item === 'string' && numbers[i] !== undefined ? numbers[i] : item;
        checkValue(each, v, (m) => fail(`[${i}]: ${m}`), (n) => !enumType || Object.values(enumType.values).includes(n));
      });
    }
    return;
  }
  const enumType = field.resolvedType && 'values' in (field.resolvedType as object) ? (field.resolvedType as protobuf.Enum) : null;
  if (enumType && typeof enumNumber === 'number') {
    checkValue(rules, enumNumber, fail, (n) => Object.values(enumType.values).includes(n));
    checkEnumLists(rules, enumNumber, fail);
    return;
  }
  checkValue(rules, value, fail);
}
