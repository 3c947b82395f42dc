import protobuf from 'protobufjs';
import { MAX_DEPTH } from './limits.js';
import { messageFormToJson } from './proto-binary.js';
import { childPath, fullName, jsonName, lookupTypeOrNull, mapKeyType, type JsonObject, type UnknownFieldUse } from './proto-json.js';
import { typeNameOfUrl } from './wkt.js';
import type { ConfigError } from './config-error.js';

/**
 * Protobuf text format (`.pb_text`) → canonical proto3 JSON, by reflection over the schema.
 * npm has no maintained text-format parser (see the dependency reference), so this is one
 * tokenizer and one recursive parser. Supported: `#` comments; `field: value` and
 * `field { … }` / `field < … >`; `[a, b]` lists; repeated fields by repetition; optional `,`/`;`
 * separators; quoted strings with C escapes and adjacent-literal concatenation; decimal, hex
 * and octal integers; floats with `f` suffixes, `inf` and `nan`; enums by name or number;
 * `true`/`false`/`t`/`f`/`1`/`0`; and the expanded Any form `[type.googleapis.com/x.Y] { … }`.
 */

type Token =
  | { kind: 'ident'; text: string; line: number }
  | { kind: 'number'; text: string; line: number }
  | { kind: 'string'; bytes: Buffer; line: number }
  | { kind: 'punct'; text: string; line: number }
  | { kind: 'eof'; line: number };

export class TextFormatError extends Error {}

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  const n = src.length;
  while (i < n) {
    const c = src[i]!;
    if (c === '\n') { line++; i++; continue; }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v') { i++; continue; }
    if (c === '#') { while (i < n && src[i] !== '\n') i++; continue; }
    if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_]/.test(src[j]!)) j++;
      tokens.push({ kind: 'ident', text: src.slice(i, j), line });
      i = j;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^(0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?)/.exec(src.slice(i, i + 64));
      if (!m) throw new TextFormatError(`line ${line}: malformed number`);
      tokens.push({ kind: 'number', text: m[0], line });
      i += m[0].length;
      continue;
    }
    if (c === '"' || c === "'") {
      const { bytes, end } = readString(src, i, line);
      tokens.push({ kind: 'string', bytes, line });
      i = end;
      continue;
    }
    if ('{}<>[]:,;-/.'.includes(c)) {
      tokens.push({ kind: 'punct', text: c, line });
      i++;
      continue;
    }
    throw new TextFormatError(`line ${line}: unexpected character ${JSON.stringify(c)}`);
  }
  tokens.push({ kind: 'eof', line });
  return tokens;
}

const SIMPLE_ESCAPES: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, '\\': 92, "'": 39, '"': 34, '?': 63 };

function readString(src: string, start: number, line: number): { bytes: Buffer; end: number } {
  const quote = src[start];
  const out: number[] = [];
  let i = start + 1;
  while (i < src.length && src[i] !== quote) {
    const c = src[i]!;
    if (c === '\n') throw new TextFormatError(`line ${line}: string literal is not terminated`);
    if (c !== '\\') {
      out.push(...Buffer.from(c, 'utf8'));
      i++;
      continue;
    }
    const e = src[i + 1] ?? '';
    if (e in SIMPLE_ESCAPES) { out.push(SIMPLE_ESCAPES[e]!); i += 2; continue; }
    let m: RegExpExecArray | null;
    if ((m = /^[0-7]{1,3}/.exec(src.slice(i + 1, i + 4)))) { out.push(parseInt(m[0], 8) & 0xff); i += 1 + m[0].length; continue; }
    if ((e === 'x' || e === 'X') && (m = /^[0-9a-fA-F]{1,2}/.exec(src.slice(i + 2, i + 4)))) { out.push(parseInt(m[0], 16)); i += 2 + m[0].length; continue; }
    if (e === 'u' && (m = /^[0-9a-fA-F]{4}/.exec(src.slice(i + 2, i + 6)))) { out.push(...Buffer.from(String.fromCodePoint(parseInt(m[0], 16)), 'utf8')); i += 6; continue; }
    if (e === 'U' && (m = /^[0-9a-fA-F]{8}/.exec(src.slice(i + 2, i + 10)))) { out.push(...Buffer.from(String.fromCodePoint(parseInt(m[0], 16)), 'utf8')); i += 10; continue; }
    throw new TextFormatError(`line ${line}: invalid escape sequence '\\${e}'`);
  }
  if (i >= src.length) throw new TextFormatError(`line ${line}: string literal is not terminated`);
  return { bytes: Buffer.from(out), end: i + 1 };
}

const mapEntryTypes = new WeakMap<protobuf.Field, protobuf.Type>();

/** Text format writes a map entry as a message `{ key: … value: … }`; this is its (detached) type. */
function mapEntryType(field: protobuf.Field): protobuf.Type {
  let entryType = mapEntryTypes.get(field);
  if (entryType) return entryType;
  entryType = new protobuf.Type('MapEntry')
    .add(new protobuf.Field('key', 1, mapKeyType(field)))
    .add(new protobuf.Field('value', 2, field.type));
  entryType.fields.value!.resolvedType = field.resolvedType;
  mapEntryTypes.set(field, entryType);
  return entryType;
}

export class TextFormatParser {
  private pos = 0;
  private readonly tokens: Token[];
  readonly unknownFields: UnknownFieldUse[] = [];
  readonly errors: ConfigError[] = [];

  constructor(private readonly root: protobuf.Root, source: string) {
    this.tokens = tokenize(source);
  }

  /** Parses a whole document as one message of `type`. Throws TextFormatError on a syntax error. */
  parse(type: protobuf.Type): JsonObject {
    const value = this.parseBody(type, '', 'eof');
    return value as JsonObject;
  }

  private peek(): Token { return this.tokens[this.pos]!; }
  private next(): Token { return this.tokens[this.pos++]!; }
  private isPunct(text: string): boolean {
    const t = this.peek();
    return t.kind === 'punct' && t.text === text;
  }
  private expectPunct(text: string): void {
    const t = this.next();
    if (t.kind !== 'punct' || t.text !== text) throw new TextFormatError(`line ${t.line}: expected '${text}', got ${this.show(t)}`);
  }
  private show(t: Token): string {
    if (t.kind === 'eof') return 'end of input';
    if (t.kind === 'string') return 'a string';
    return `'${t.text}'`;
  }

  /** Reads `[type.googleapis.com/a.b.C]`, the name of an expanded Any. */
  private readBracketName(): string {
    this.expectPunct('[');
    let name = '';
    while (!this.isPunct(']')) {
      const t = this.next();
      if (t.kind === 'ident' || (t.kind === 'punct' && (t.text === '.' || t.text === '/'))) name += t.text;
      else throw new TextFormatError(`line ${t.line}: unexpected ${this.show(t)} in a type name`);
    }
    this.expectPunct(']');
    return name;
  }

  /** Messages open around the one being read: Protocol Buffers' recursion limit applies (limits.ts). */
  depth = 0;

  private parseBody(type: protobuf.Type, path: string, end: string): unknown {
    if (this.depth >= MAX_DEPTH) throw new TextFormatError(`line ${this.peek().line}: nested deeper than ${MAX_DEPTH} levels`);
    this.depth++;
    try {
      return this.parseFields(type, path, end);
    } finally {
      this.depth--;
    }
  }

  private parseFields(type: protobuf.Type, path: string, end: string): unknown {
    const form: JsonObject = {};
    const seen = new Set<string>();
    for (;;) {
      const t = this.peek();
      if (end === 'eof' ? t.kind === 'eof' : t.kind === 'punct' && t.text === end) break;
      if (t.kind === 'eof') throw new TextFormatError(`line ${t.line}: expected '${end}' before end of input`);
      if (t.kind === 'punct' && t.text === '[') {
        const typeUrl = this.readBracketName();
        if (fullName(type) !== 'google.protobuf.Any') throw new TextFormatError(`line ${t.line}: extension [${typeUrl}] is not supported in ${fullName(type)}`);
        if (this.isPunct(':')) this.next();
        const inner = lookupTypeOrNull(this.root, typeNameOfUrl(typeUrl));
        const close = this.openMessage();
        if (!inner) {
          this.skipBody(close);
          this.next();
          return { '@type': typeUrl };
        }
        const value = this.parseBody(inner, path, close);
        this.next();
        this.skipSeparator();
        return typeof value === 'object' && value !== null && !Array.isArray(value) && !fullName(inner).startsWith('google.protobuf.')
          ? { '@type': typeUrl, ...(value as JsonObject) }
          : { '@type': typeUrl, value };
      }
      const nameTok = this.next();
      if (nameTok.kind !== 'ident') throw new TextFormatError(`line ${nameTok.line}: expected a field name, got ${this.show(nameTok)}`);
      const field = type.fields[nameTok.text] ?? type.fields[jsonName(nameTok.text)];
      const fieldPath = childPath(path, nameTok.text);
      if (!field) {
        this.unknownFields.push({ path: fieldPath, typeName: fullName(type), field: nameTok.text });
        if (this.isPunct(':')) this.next();
        this.skipValue();
        this.skipSeparator();
        continue;
      }
      const isMessage = field.resolvedType instanceof protobuf.Type;
      if (this.isPunct(':')) this.next();
      else if (!isMessage) throw new TextFormatError(`line ${nameTok.line}: expected ':' after ${nameTok.text}`);
      const values: unknown[] = [];
      if (this.isPunct('[')) {
        this.next();
        while (!this.isPunct(']')) {
          values.push(this.parseFieldValue(field, `${fieldPath}[${values.length}]`));
          if (this.isPunct(',')) this.next();
          else if (!this.isPunct(']')) throw new TextFormatError(`line ${this.peek().line}: expected ',' or ']' in a list`);
        }
        this.next();
        if (!field.repeated && !field.map) throw new TextFormatError(`line ${nameTok.line}: ${nameTok.text} is not a repeated field`);
      } else {
        values.push(this.parseFieldValue(field, fieldPath));
      }
      this.skipSeparator();
      if (field.map) {
        const map = (form[field.name] ??= {}) as JsonObject;
        for (const entry of values as JsonObject[]) map[String(entry.key ?? '')] = entry.value;
      } else if (field.repeated) {
        ((form[field.name] ??= []) as unknown[]).push(...values);
      } else {
        if (seen.has(field.name)) throw new TextFormatError(`line ${nameTok.line}: non-repeated field "${field.name}" is specified multiple times`);
        seen.add(field.name);
        form[field.name] = values[0];
      }
    }
    return messageFormToJson(type, form, path, this.root, this);
  }

  private openMessage(): string {
    const t = this.next();
    if (t.kind === 'punct' && t.text === '{') return '}';
    if (t.kind === 'punct' && t.text === '<') return '>';
    throw new TextFormatError(`line ${t.line}: expected '{' or '<', got ${this.show(t)}`);
  }

  private skipSeparator(): void {
    if (this.isPunct(',') || this.isPunct(';')) this.next();
  }

  private parseFieldValue(field: protobuf.Field, path: string): unknown {
    if (field.map) {
      const close = this.openMessage();
      const entry = this.parseBody(mapEntryType(field), path, close) as JsonObject;
      this.next();
      return entry;
    }
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Type) {
      const close = this.openMessage();
      const value = this.parseBody(resolved, path, close);
      this.next();
      return value;
    }
    if (resolved instanceof protobuf.Enum) {
      const t = this.next();
      if (t.kind === 'ident') {
        if (resolved.values[t.text] === undefined) throw new TextFormatError(`line ${t.line}: unknown value '${t.text}' for enum ${fullName(resolved)}`);
        return t.text;
      }
      if (t.kind === 'number' || (t.kind === 'punct' && t.text === '-')) {
        const num = this.readNumber(t);
        return resolved.valuesById[num as number] ?? num;
      }
      throw new TextFormatError(`line ${t.line}: expected an enum value, got ${this.show(t)}`);
    }
    return this.parseScalar(field.type);
  }

  private readNumber(first: Token): number | string {
    let negative = false;
    let t = first;
    if (t.kind === 'punct' && t.text === '-') {
      negative = true;
      t = this.next();
    }
    if (t.kind === 'ident' && /^(inf|infinity|nan)$/i.test(t.text)) {
      return t.text.toLowerCase() === 'nan' ? NaN : negative ? -Infinity : Infinity;
    }
    if (t.kind !== 'number') throw new TextFormatError(`line ${t.line}: expected a number, got ${this.show(t)}`);
    let text = t.text;
    let value: number;
    if (/^0[xX]/.test(text)) value = Number(BigInt(text));
    else if (/^0[0-7]+$/.test(text)) value = parseInt(text, 8);
    else {
      if (/[fF]$/.test(text)) text = text.slice(0, -1);
      value = Number(text);
      if (/^\d+$/.test(text) && !Number.isSafeInteger(value)) return (negative ? '-' : '') + BigInt(text).toString();
    }
    return negative ? -value : value;
  }

  private parseScalar(kind: string): unknown {
    const t = this.next();
    if (kind === 'string' || kind === 'bytes') {
      if (t.kind !== 'string') throw new TextFormatError(`line ${t.line}: expected a string, got ${this.show(t)}`);
      const parts = [t.bytes];
      while (this.peek().kind === 'string') parts.push((this.next() as { bytes: Buffer }).bytes);
      const bytes = Buffer.concat(parts);
      return kind === 'bytes' ? bytes.toString('base64') : bytes.toString('utf8');
    }
    if (kind === 'bool') {
      const text = t.kind === 'ident' || t.kind === 'number' ? t.text : '';
      if (['true', 'True', 't', '1'].includes(text)) return true;
      if (['false', 'False', 'f', '0'].includes(text)) return false;
      throw new TextFormatError(`line ${t.line}: expected true or false, got ${this.show(t)}`);
    }
    return this.readNumber(t);
  }

  /** Skips the value of an unknown field: a scalar, a string run, a list or a message. */
  private skipValue(): void {
    if (this.isPunct('{') || this.isPunct('<')) {
      const close = this.openMessage();
      this.skipBody(close);
      this.next();
      return;
    }
    if (this.isPunct('[')) {
      this.next();
      while (!this.isPunct(']')) {
        if (this.peek().kind === 'eof') throw new TextFormatError(`line ${this.peek().line}: unterminated list`);
        this.skipValue();
        if (this.isPunct(',')) this.next();
      }
      this.next();
      return;
    }
    if (this.isPunct('-')) this.next();
    const t = this.next();
    if (t.kind === 'string') while (this.peek().kind === 'string') this.next();
    else if (t.kind !== 'ident' && t.kind !== 'number') throw new TextFormatError(`line ${t.line}: unexpected ${this.show(t)}`);
  }

  private skipBody(close: string): void {
    let depth = 0;
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof') throw new TextFormatError(`line ${t.line}: expected '${close}' before end of input`);
      if (t.kind === 'punct' && (t.text === '{' || t.text === '<')) depth++;
      if (t.kind === 'punct' && (t.text === '}' || t.text === '>')) {
        if (depth === 0) return;
        depth--;
      }
      this.next();
    }
  }
}
