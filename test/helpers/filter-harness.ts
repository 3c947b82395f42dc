import type { Transform } from 'node:stream';
import type { AccessLogEntry } from '../../shared/access-log/entry.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import type { MutableHeaders } from '../../shared/header-mutation.js';
import type { RequestView } from '../../shared/matchers.js';
import { stats } from '../../shared/stats/process.js';
import { BodyCapture } from '../../shared/http/body-capture.js';
import type { ClusterResource } from '../../shared/config/resources.js';
import type { Cluster } from '../../shared/config/envoy-types.js';
import { BreakerCounts, regionBytes } from '../../shared/upstream/breaker-counts.js';
import { endpointsOf, upstreamHost, type UpstreamHost } from '../../shared/upstream/hosts.js';
import type { ConnectionView, FilterContext, FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../shared/http/filter-api.js';
import { ClusterManager } from '../../worker/upstream/cluster-manager.js';
import { filterClusters } from '../../worker/upstream/filter-clusters.js';
import { perFilterConfigs } from '../../shared/http/per-filter-config.js';
import { RouteTable, type Route } from '../../shared/http/route-table.js';

/**
 * HTTP filters tested alone, as Envoy's filter tests run a filter against fake callbacks: a
 * request the test describes, the filter's decision, and what it did through its callbacks
 * (a local reply, response flags, metadata, a body read or replaced, body transforms) — no
 * process tree, no sockets.
 */

export interface FakeRequestOptions {
  method?: string;
  path?: string;
  authority?: string;
  headers?: Record<string, string | string[]>;
  /**
   * The route configuration the request is routed by (canonical JSON, as the loader gives it);
   * by default one virtual host for every domain with one route, prefix `/` to cluster
   * `backend`. null: no route matches.
   */
  routeConfig?: JsonObject | null;
  clusterName?: string;
  connection?: Partial<ConnectionView>;
  /** The request body, if it has one. */
  body?: Buffer | string;
  /** readBody() answers 'aborted' (the client went away). */
  aborted?: boolean;
  /** A tap session was on when the request came: its bodies are kept up to these limits (capturedBodies). */
  capture?: { maxRequestBytes: number; maxResponseBytes: number };
}

export interface LocalReply {
  status: number;
  headers: MutableHeaders;
  body: string;
}

/** A FilterRequest whose callbacks record what the filter did. */
export class FakeRequest implements FilterRequest {
  readonly rq: RequestView;
  readonly connection: ConnectionView;
  readonly route: Route | undefined;
  readonly clusterName: string | undefined;
  readonly perRoute: JsonObject[];
  /** The local reply the filter sent, if it did. */
  replied: LocalReply | undefined;
  /** Response flags set (ResponseFlag bits), and the response code details last given. */
  flags = 0;
  details: string | undefined;
  /** The filter said the request is a health check (markHealthCheck). */
  healthCheck = false;
  /** The body as it would go upstream (after readBody and replaceBody). */
  body: Buffer | undefined;
  readonly requestTransforms: Transform[] = [];
  readonly responseTransforms: Transform[] = [];
  /** Each transform's byte counter (told of each chunk going in, as the connection manager tells it), by position. */
  readonly requestBytesIn: (((n: number) => void) | undefined)[] = [];
  readonly responseBytesIn: (((n: number) => void) | undefined)[] = [];
  folded: { limit: number; fold: (status: number, headers: MutableHeaders, body: Buffer) => void } | undefined;
  private readonly dynamicMetadata: Record<string, Record<string, unknown>> = {};
  private readonly whenFinished: (() => void)[] = [];
  private readonly aborted: boolean;
  /** The route's typed_per_filter_config disables the filter: the chain would not run it. */
  readonly skipped: boolean;
  private readonly captures: { request: BodyCapture; response: BodyCapture } | undefined;

  constructor(options: FakeRequestOptions = {}, filterName = '') {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(options.headers ?? {})) headers[k.toLowerCase()] = v;
    const authority = options.authority ?? 'example.com';
    headers.host ??= authority;
    this.rq = { method: options.method ?? 'GET', path: options.path ?? '/', authority, headers };
    this.connection = {
      key: {},
      directRemoteIp: '127.0.0.1',
      directRemotePort: 40000,
      remoteIp: '127.0.0.1',
      remotePort: 40000,
      localIp: '127.0.0.1',
      localPort: 10000,
      serverName: undefined,
      tls: false,
      protocol: 'HTTP/1.1',
      peer: () => undefined,
      ...options.connection,
    };
    const routes = options.routeConfig === undefined ? DEFAULT_ROUTES : options.routeConfig;
    this.route = routes === null ? undefined : new RouteTable(routes).route(this.rq);
    this.clusterName = options.clusterName ?? (this.route?.action.kind === 'route' ? this.route.action.cluster : undefined);
    const perRoute = perFilterConfigs(this.route?.perFilter.get(filterName));
    this.skipped = perRoute === 'disabled';
    this.perRoute = perRoute === 'disabled' ? [] : perRoute;
    this.body = options.body === undefined ? undefined : Buffer.from(options.body);
    if (this.body) headers['content-length'] ??= String(this.body.length);
    this.aborted = options.aborted === true;
    if (options.capture) {
      this.captures = { request: new BodyCapture(options.capture.maxRequestBytes), response: new BodyCapture(options.capture.maxResponseBytes) };
      if (this.body) this.captures.request.add(this.body);
    }
    made.push(this);
  }

  capturedBodies(): { request: BodyCapture; response: BodyCapture } | undefined {
    return this.captures;
  }

  /** The response's body goes to the client (what a tap keeps of it). */
  sendResponseBody(chunk: Buffer | string): void {
    this.captures?.response.add(chunk);
  }

  reply(status: number, headers: MutableHeaders, body = ''): void {
    if (this.replied) throw new Error('a second local reply for the same request');
    this.replied = { status, headers, body };
  }

  flag(bit: number, details?: string): void {
    this.flags |= bit;
    if (details !== undefined) this.details = details;
  }

  finished(done: () => void): void {
    this.whenFinished.push(done);
  }

  markHealthCheck(): void {
    this.healthCheck = true;
  }

  /** The exchange ends: what the filter asked to run then runs. */
  finish(): void {
    for (const done of this.whenFinished.splice(0)) done();
  }

  entry(): AccessLogEntry {
    const c = this.connection;
    return {
      startTime: Date.now(),
      protocol: c.protocol,
      request: this.rq,
      responseHeader: () => undefined,
      responseCode: 0,
      responseFlags: this.flags,
      bytesReceived: 0,
      bytesSent: 0,
      downstreamRemoteAddress: `${c.directRemoteIp}:${c.directRemotePort}`,
      downstreamLocalAddress: `${c.localIp}:${c.localPort}`,
      requestedServerName: c.serverName,
      healthCheck: false,
      dynamicMetadata: this.dynamicMetadata,
    };
  }

  async readBody(limit: number): Promise<Buffer | undefined | 'too_large' | 'aborted'> {
    if (this.aborted) return 'aborted';
    if (this.body === undefined) return undefined;
    return this.body.length > limit ? 'too_large' : this.body;
  }

  replaceBody(body: Buffer): void {
    if (this.body === undefined) throw new Error('the request body has not been read');
    this.body = body;
    this.rq.headers['content-length'] = String(body.length);
  }

  metadata(): Record<string, Record<string, unknown>> {
    return this.dynamicMetadata;
  }

  hasBody(): boolean {
    return this.body !== undefined && this.body.length > 0;
  }

  transformRequestBody(transform: Transform, bytesIn?: (n: number) => void): void {
    this.requestTransforms.push(transform);
    this.requestBytesIn.push(bytesIn);
    delete this.rq.headers['content-length'];
  }

  transformBody(transform: Transform, bytesIn?: (n: number) => void): void {
    this.responseTransforms.push(transform);
    this.responseBytesIn.push(bytesIn);
  }

  foldResponseIntoHeaders(limit: number, fold: (status: number, headers: MutableHeaders, body: Buffer) => void): void {
    this.folded = { limit, fold };
  }
}

/** Every request made, for releaseTransforms(). */
const made: FakeRequest[] = [];

/** Destroys the body transforms the filters added that a test did not drive to their end (zlib streams hold native memory): for afterEach. */
export function releaseTransforms(): void {
  for (const r of made.splice(0)) for (const t of [...r.requestTransforms, ...r.responseTransforms]) t.destroy();
}

/** A worker's cluster manager with STATIC clusters on 127.0.0.1, by name and ports (no port: a cluster without a host). */
export function clusterManagerOf(defs: Record<string, number[]>): ClusterManager {
  const layout = { capacity: 16, workers: 1 };
  const resources: ClusterResource[] = [];
  const hosts: Record<string, UpstreamHost[]> = {};
  Object.entries(defs).forEach(([name, ports], i) => {
    const lbEndpoints = ports.map((port) => ({ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }));
    const config: Cluster = { name, type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: lbEndpoints }] } };
    resources.push({ name, config, addedViaApi: false, lastUpdatedMs: 0, breakerSlot: i });
    hosts[name] = endpointsOf(config).map((e) => upstreamHost(e, e.hostname, false));
  });
  const manager = new ClusterManager(resources, hosts, { counts: new BreakerCounts(new ArrayBuffer(regionBytes(layout)), layout), worker: 0 }, {});
  managers.push(manager);
  return manager;
}

const managers: ClusterManager[] = [];

/** What a connection manager gives its filters, with clusterManagerOf(defs) as its clusters. */
export function filterContext(statPrefix: string, defs: Record<string, number[]> = {}, healthCheckFailing = () => false): FilterContext {
  return { statPrefix, localCluster: 'local', clusters: filterClusters(clusterManagerOf(defs)), healthCheckFailing };
}

/** Closes every cluster manager made here (their pools and timers): for after(). */
export function closeClusterManagers(): Promise<unknown> {
  return Promise.all(managers.splice(0).map((m) => m.close()));
}

/** One filter instance and the request it saw. */
export interface FilterRun {
  filter: HttpFilter;
  request: FakeRequest;
  decision: FilterDecision;
}

/** Runs a request's headers through a new instance of the factory's filter (awaiting a filter that holds the request). */
export async function decode(factory: HttpFilterFactory, options: FakeRequestOptions = {}): Promise<FilterRun> {
  const request = new FakeRequest(options, factory.name);
  const filter = factory.create();
  // As the chain (worker/http/filters/run.ts): a filter the route disables is not run.
  const decision = request.skipped ? 'continue' : await filter.decodeHeaders(request);
  return { filter, request, decision };
}

/**
 * A new instance of the factory's filter, made as the chain makes one after a filter that answered
 * the request: it does not see the request's headers, it is told of them (answeredBefore), and the
 * answer's headers come through it next (encode).
 */
export function answeredBefore(factory: HttpFilterFactory, options: FakeRequestOptions = {}): FilterRun {
  const request = new FakeRequest(options, factory.name);
  const filter = factory.create();
  filter.answeredBefore?.(request);
  return { filter, request, decision: 'stop' };
}

/** A route configuration of one virtual host (every domain) with these routes. */
export function routesOf(routes: JsonObject[], vhost: JsonObject = {}): JsonObject {
  return { virtual_hosts: [{ name: 'all', domains: ['*'], routes, ...vhost }] };
}

const DEFAULT_ROUTES = routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend' } }]);

/** The response's headers through the filter (as the connection manager gives them, before they are written); returns them. */
export function encode(run: FilterRun, status: number, headers: MutableHeaders = {}): MutableHeaders {
  run.filter.encodeHeaders?.(status, headers);
  return headers;
}

/** A counter's value in this process's store (a filter counts there, as in a worker). */
export function counter(name: string): number {
  return stats.counter(name).value;
}

/** Pipes `input` through a transform and returns all it wrote. */
export function through(transform: Transform, input: Buffer | string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    transform.on('data', (c: Buffer) => out.push(c));
    transform.on('end', () => resolve(Buffer.concat(out)));
    transform.on('error', reject);
    transform.end(input);
  });
}
