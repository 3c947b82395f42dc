import { list, obj } from '../../../../config/access.js';
import { parseDecimal } from '../../../../decimal.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import type { MutableHeaders } from '../../../../header-mutation.js';
import { compileRegexSubstitution } from '../../../../matchers.js';
import type { FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';

/**
 * envoy.filters.http.header_to_metadata, as Envoy's: each rule reads a request (or response)
 * header, or a cookie, and writes dynamic metadata: `on_header_present` the header's value (or a
 * fixed one, or the value rewritten by a regex), `on_header_missing` a fixed value, as a string
 * or a number, base64-decoded first with `encode: BASE64`; `remove` then takes the header away.
 * Empty values are not written, nor values of 8 KiB or more, nor base64 that does not decode, nor
 * NUMBER values that are not numbers, as in Envoy. The namespace is `metadata_namespace`, by default the filter's
 * name. A route's configuration replaces the filter's rules. What it writes shows in access logs
 * (%DYNAMIC_METADATA%) and to later filters.
 */

const DEFAULT_NAMESPACE = 'envoy.filters.http.header_to_metadata';

interface Pair {
  namespace: string;
  key: string;
  value: string | undefined;
  rewrite: ((v: string) => string) | undefined;
  number: boolean;
  base64: boolean;
}

interface Rule {
  header: string | undefined;
  cookie: string | undefined;
  present: Pair | undefined;
  missing: Pair | undefined;
  remove: boolean;
}

interface Rules {
  request: Rule[];
  response: Rule[];
}

function pairOf(kv: unknown): Pair | undefined {
  if (kv === undefined) return undefined;
  const p = obj(kv);
  const rewriteFn = p.regex_value_rewrite !== undefined ? compileRegexSubstitution(obj(p.regex_value_rewrite)) : undefined;
  return {
    namespace: typeof p.metadata_namespace === 'string' && p.metadata_namespace ? p.metadata_namespace : DEFAULT_NAMESPACE,
    key: String(p.key),
    value: typeof p.value === 'string' && p.value !== '' ? p.value : undefined,
    rewrite: rewriteFn,
    number: p.type === 'NUMBER',
    base64: p.encode === 'BASE64',
  };
}

function rulesOf(rules: unknown): Rule[] {
  return list(rules).map((r) => ({
    header: typeof r.header === 'string' && r.header ? r.header.toLowerCase() : undefined,
    cookie: typeof r.cookie === 'string' && r.cookie ? r.cookie : undefined,
    present: pairOf(r.on_header_present),
    missing: pairOf(r.on_header_missing),
    remove: r.remove === true,
  }));
}

const compiled = new WeakMap<JsonObject, Rules>();
function compile(config: JsonObject): Rules {
  let rules = compiled.get(config);
  if (!rules) compiled.set(config, (rules = { request: rulesOf(config.request_rules), response: rulesOf(config.response_rules) }));
  return rules;
}

function headerValue(headers: MutableHeaders, name: string): string | undefined {
  const v = headers[name];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(',') : String(v);
}

function cookieValue(headers: MutableHeaders, name: string): string | undefined {
  const header = headerValue(headers, 'cookie');
  if (header === undefined) return undefined;
  for (const part of header.split(/;\s*/)) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}

/** Envoy's MAX_HEADER_VALUE_LEN: a longer value is not written. */
const MAX_VALUE_LENGTH = 8 * 1024;

/** Envoy's Base64::decodeWithoutPadding: the standard alphabet, padding optional; '' when the text is not base64. */
function decodeBase64(text: string): string {
  const body = text.replace(/={1,2}$/, '');
  if (!/^[A-Za-z0-9+/]*$/.test(body) || body.length % 4 === 1) return '';
  return Buffer.from(body, 'base64').toString('utf8');
}

/** absl::SimpleAtod over the trimmed text: a decimal number (or inf, nan), else undefined. */
function parseNumber(text: string): number | undefined {
  const t = text.trim();
  if (/^[+-]?(inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(t)) return NaN;
  return parseDecimal(t);
}

/** Writes a value as the pair says; false (nothing written) for an empty, too long, undecodable or non-numeric one. */
function write(metadata: () => Record<string, Record<string, unknown>>, pair: Pair, raw: string): boolean {
  let value = pair.rewrite ? pair.rewrite(raw) : raw;
  if (value === '' || value.length >= MAX_VALUE_LENGTH) return false;
  if (pair.base64) {
    value = decodeBase64(value);
    if (value === '') return false;
  }
  let typed: string | number = value;
  if (pair.number) {
    const n = parseNumber(value);
    if (n === undefined) return false;
    typed = n;
  }
  const m = metadata();
  (m[pair.namespace] ??= {})[pair.key] = typed;
  return true;
}

function apply(rules: Rule[], headers: MutableHeaders, metadata: () => Record<string, Record<string, unknown>>): void {
  for (const rule of rules) {
    const value = rule.cookie !== undefined ? cookieValue(headers, rule.cookie) : headerValue(headers, rule.header!);
    if (value !== undefined && rule.present) write(metadata, rule.present, rule.present.value ?? value);
    else if (value === undefined && rule.missing?.value !== undefined) write(metadata, rule.missing, rule.missing.value);
    if (value !== undefined && rule.remove && rule.header !== undefined) delete headers[rule.header];
  }
}

class HeaderToMetadataFilter implements HttpFilter {
  private response: { rules: Rule[]; metadata: () => Record<string, Record<string, unknown>> } | undefined;

  constructor(private readonly rules: Rules) {}

  decodeHeaders(request: FilterRequest): FilterDecision {
    const rules = this.rulesFor(request);
    apply(rules.request, request.rq.headers as MutableHeaders, () => request.metadata());
    return 'continue';
  }

  /** As Envoy's: an earlier filter's answer goes through the response rules too. */
  answeredBefore(request: FilterRequest): void {
    this.rulesFor(request);
  }

  private rulesFor(request: FilterRequest): Rules {
    const rules = request.perRoute.length ? compile(request.perRoute[0]!) : this.rules;
    if (rules.response.length) this.response = { rules: rules.response, metadata: () => request.metadata() };
    return rules;
  }

  encodeHeaders(_status: number, headers: MutableHeaders): void {
    if (this.response) apply(this.response.rules, headers, this.response.metadata);
  }
}

export function headerToMetadataFactory(name: string, config: JsonObject): HttpFilterFactory {
  const rules = compile(config);
  return { name, create: () => new HeaderToMetadataFilter(rules) };
}
