import type { IncomingHttpHeaders } from 'node:http';
import type { AccessLogEntry } from '../shared/access-log/entry.js';
import { list, obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { appendHeaderValue, applyHeaderMutations, type MutableHeaders } from '../shared/header-mutation.js';
import { compileHeaderMatcher, type RequestView } from '../shared/matchers.js';
import { decideRoute, type RouteDecision } from '../shared/http/route-explain.js';
import type { RouteTable } from '../shared/http/route-table.js';
import type { Coverage } from './coverage.js';

/**
 * One test of a router_check_tool file, run as Envoy's tool runs it: the request its `input`
 * describes, routed by the proxy's own route table (shared/http/route-explain.ts decides), its
 * headers finalized once as the route would send them, then each check of `validate` in the
 * tool's order, with its failure lines and the ValidationFailure fields of those that fail.
 */

export interface TestResult {
  name: string;
  passed: boolean;
  /** What failed, as the tool prints it. */
  lines: string[];
  /** ValidationFailure (canonical JSON), when it failed. */
  failure?: JsonObject;
}

type Headers = [name: string, value: string][];

/** The routed request and its response, finalized as Envoy's finalizeRequestHeaders and finalizeResponseHeaders leave them. */
interface Finalized {
  decision: RouteDecision;
  /** The route forwards (Envoy's route entry). */
  routeEntry: boolean;
  /** A redirect, a direct response or the require_tls redirect (Envoy's direct-response entry). */
  directEntry: boolean;
  request: MutableHeaders;
  response: MutableHeaders;
}

/** Envoy's tool keeps the random value in an int: a uint64 past 2^31 wraps, then widens back. */
function toolRandom(value: unknown): bigint {
  return BigInt.asUintN(64, BigInt.asIntN(32, BigInt(String(value ?? 0))));
}

function add(headers: MutableHeaders, name: string, value: string): void {
  appendHeaderValue(headers, name.toLowerCase(), value);
}

function first(headers: MutableHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return v === undefined ? undefined : Array.isArray(v) ? v[0] : String(v);
}

function view(headers: MutableHeaders): RequestView {
  return { method: first(headers, ':method') ?? '', path: first(headers, ':path') ?? '', authority: first(headers, ':authority') ?? '', headers: headers as IncomingHttpHeaders };
}

export class RouteChecker {
  constructor(
    private readonly table: RouteTable,
    private readonly coverage: Coverage,
  ) {}

  run(item: JsonObject): TestResult {
    const input = obj(item.input);
    const validate = obj(item.validate);
    const request: MutableHeaders = {};
    const ssl = input.ssl === true;
    const pairs: Headers = [
      [':authority', String(input.authority)],
      [':path', String(input.path)],
      [':method', String(input.method)],
      ['x-forwarded-proto', ssl ? 'https' : 'http'],
      [':scheme', ssl ? 'https' : 'http'],
      ...(input.internal === true ? ([['x-envoy-internal', 'true']] as Headers) : []),
      ...list(input.additional_request_headers).map((h): [string, string] => [String(h.key), String(h.value ?? '')]),
    ];
    for (const [name, value] of pairs) add(request, name, value);
    const response: MutableHeaders = {};
    for (const h of list(input.additional_response_headers)) add(response, String(h.key), String(h.value ?? ''));
    const active = typeof input.runtime === 'string' ? input.runtime : '';
    const rq: RequestView = { ...view(request), random: toolRandom(input.random_value), runtimeKeyOn: (key) => active !== '' && key === active };
    const f = finalize(decideRoute(this.table, rq), request, response);
    return this.check(String(item.test_name), validate, f);
  }

  private check(name: string, validate: JsonObject, f: Finalized): TestResult {
    const lines: string[] = [];
    const failure: JsonObject = {};
    const { decision: d } = f;
    const route = d.route;
    const scalar = (field: string, actual: string | number, covers: () => void) => {
      if (validate[field] === undefined) return;
      const expected = validate[field] as string | number;
      if (expected === actual) {
        covers();
        return;
      }
      lines.push(`expected: [${expected}], actual: [${actual}], test type: ${field}`);
      failure[`expected_${field}`] = expected;
      failure[`actual_${field}`] = actual;
    };
    const onRoute = (field: string) => () => f.routeEntry && this.coverage.markRoute(route!, d.clusterName ?? '', field);
    const onDirect = (field: string) => () => f.directEntry && this.coverage.markDirect(route!, field);
    scalar('cluster_name', f.routeEntry ? (d.clusterName ?? '') : '', onRoute('cluster'));
    // Virtual clusters are refused by the configuration's loader: a virtual host here has none.
    scalar('virtual_cluster_name', '', onRoute('virtual_cluster'));
    scalar('virtual_host_name', f.routeEntry ? d.domain!.host.name : '', onRoute('virtual_host'));
    scalar('path_rewrite', f.routeEntry ? (first(f.request, ':path') ?? '') : '', onRoute('path_rewrite'));
    scalar('host_rewrite', f.routeEntry ? (first(f.request, ':authority') ?? '') : '', onRoute('host_rewrite'));
    scalar('path_redirect', f.directEntry ? (d.location ?? '') : '', onDirect('path_redirect'));
    scalar('code_redirect', f.directEntry ? directStatus(d) : 0, onDirect('code_redirect'));
    for (const [kind, headers] of [['request', f.request], ['response', f.response]] as const) {
      const failures: JsonObject[] = [];
      for (const matcher of list(validate[`${kind}_header_matches`])) {
        const line = headerMatchFailure(matcher, headers, `${kind}_header_matches`);
        if (line === undefined) continue;
        lines.push(line);
        failures.push({ header_matcher: matcher, actual_header_value: headerText(headers, String(matcher.name)) ?? '' });
      }
      if (failures.length) failure[`${kind}_header_match_failures`] = failures;
      // The deprecated header_fields: the first value of the header, or '', against the value.
      for (const field of list(validate[`${kind}_header_fields`])) {
        const actual = first(headers, String(field.key)) ?? '';
        const expected = String(field.value ?? '');
        if (actual !== expected) lines.push(`expected: [${expected}], actual: [${actual}], test type: ${kind}_header_fields`);
      }
    }
    return lines.length ? { name, passed: false, lines, failure } : { name, passed: true, lines };
  }
}

function directStatus(d: RouteDecision): number {
  const a = d.route!.action;
  return a.kind === 'route' ? 0 : a.status;
}

/** All of a header's values joined with commas, as matchers see them. */
function headerText(headers: MutableHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return v === undefined ? undefined : Array.isArray(v) ? v.join(',') : String(v);
}

const SPECIFIERS = ['exact_match', 'safe_regex_match', 'range_match', 'present_match', 'prefix_match', 'suffix_match', 'contains_match', 'string_match'] as const;
const STRING_PATTERNS = ['exact', 'prefix', 'suffix', 'safe_regex', 'contains', 'custom'] as const;

/** The line of a failed header matcher, as Envoy's tool words it; undefined when it matches. */
function headerMatchFailure(matcher: JsonObject, headers: MutableHeaders, kind: string): string | undefined {
  if (compileHeaderMatcher(matcher)(view(headers))) return undefined;
  const name = String(matcher.name);
  const invert = matcher.invert_match === true;
  const specifier = SPECIFIERS.find((s) => matcher[s] !== undefined) ?? 'present_match';
  const sm = obj(matcher.string_match);
  const pattern = specifier === 'string_match' ? (STRING_PATTERNS.find((p) => sm[p] !== undefined) ?? 'match_pattern_not_set') : undefined;
  const type = `${kind}.${specifier}${pattern ? `.${pattern}` : ''}`;
  const firstValue = first(headers, name) ?? 'NULL';
  if (specifier === 'present_match') return `expected: [has(${name}):${!invert}], actual: [has(${name}):${invert}], test type: ${type}`;
  if (pattern === 'exact') return `expected: [${name}: ${String(sm.exact)}], actual: ${invert ? 'NOT ' : ''}[${name}: ${firstValue}], test type: ${type}`;
  return `actual: [${name}: ${firstValue}], test type: ${type}`;
}

/**
 * The headers after the route: a forwarding route rewrites the path and Host (keeping the path
 * the client sent in x-envoy-original-path) and adds its request and response headers; a direct
 * response or redirect fills the response as a local reply does (`:status`, and with a body its
 * length and `text/plain`), then adds its response headers.
 */
function finalize(decision: RouteDecision, request: MutableHeaders, response: MutableHeaders): Finalized {
  const route = decision.route;
  const routeEntry = route?.action.kind === 'route';
  const directEntry = route !== undefined && !routeEntry;
  const entry = (status: number): AccessLogEntry => ({
    startTime: Date.now(),
    protocol: 'HTTP/1.1',
    request: view(request),
    responseHeader: (name) => first(response, name),
    responseCode: status,
    responseFlags: 0,
    bytesReceived: 0,
    bytesSent: 0,
    downstreamRemoteAddress: '127.0.0.1:0',
    ...(route?.name ? { routeName: route.name } : {}),
    healthCheck: false,
  });
  if (routeEntry) {
    const original = first(request, ':path');
    if (decision.upstreamPath !== undefined && decision.upstreamPath !== original) {
      request[':path'] = decision.upstreamPath;
      request['x-envoy-original-path'] = original;
    }
    if (decision.upstreamAuthority !== undefined) request[':authority'] = decision.upstreamAuthority;
    if (route.headers?.request.length) applyHeaderMutations(request, route.headers.request, entry(0));
    if (route.headers?.response.length) applyHeaderMutations(response, route.headers.response, entry(0));
  } else if (directEntry) {
    const status = directStatus(decision);
    add(response, ':status', String(status));
    const body = route.action.kind === 'direct_response' ? route.action.body : undefined;
    if (body?.length) {
      add(response, 'content-length', String(body.length));
      add(response, 'content-type', 'text/plain');
    }
    if (route.headers?.response.length) applyHeaderMutations(response, route.headers.response, entry(status));
  }
  return { decision, routeEntry, directEntry, request, response };
}
