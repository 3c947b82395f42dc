import { remoteOf } from '../../shared/network/connection-origin.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { DownstreamRequest, DownstreamResponse } from '../http/downstream.js';
import { obj } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { responseFlagsText } from '../../shared/access-log/entry.js';
import type { ClusterManager } from '../upstream/cluster-manager.js';
import type { HttpExchangeRecord } from '../http/exchange-record.js';
import { decideTrace, samplingOfPercents, type Sampling, type TraceReason, type TracingStats } from '../../shared/tracing/sampling.js';
import { compileCustomTags, type CustomTag, type RouteTracing } from '../../shared/tracing/route-tracing.js';
import type { Span, Tracer } from '../../shared/tracing/span.js';
import { tracerFor, type TracerContext } from './tracers.js';

/**
 * A connection manager's `tracing`: for each request, Envoy's decision (sampling.ts), a span
 * named after the route's decorator, or `ingress` / `egress <host>` (Zipkin: the host), its
 * context propagated to the upstream (from the router's child span with `start_child_span` or
 * `spawn_upstream_span`), and at the end Envoy's tags: guid:x-request-id, http.url (the path cut
 * at max_path_tag_length), http.method, downstream_cluster, user_agent, http.protocol,
 * peer.address, request_size, response_size, component, upstream_cluster, http.status_code,
 * response_flags, error, node_id, and the custom tags (a route's over the connection manager's).
 */

const DECORATOR_HEADER = 'x-envoy-decorator-operation';

/** What the request's span needs of the connection manager. */
export interface TracingContext extends TracerContext {
  statPrefix: string;
  /** traffic_direction OUTBOUND: egress spans (CLIENT), named `egress <host>`. */
  egress: boolean;
  /** The router's start_child_span. */
  startChildSpan: boolean;
}

export class HttpTracing {
  private readonly tracer: Tracer & { namesByHost?: boolean };
  private readonly sampling: Sampling;
  private readonly maxPathTagLength: number;
  private readonly customTags: CustomTag[];
  private readonly childSpans: boolean;

  constructor(
    config: JsonObject,
    /** The bootstrap's tracing.http, for a connection manager whose tracing names no provider. */
    bootstrapProvider: JsonObject | undefined,
    private readonly ctx: TracingContext,
    private readonly clusters: ClusterManager,
    /** http.<prefix>.tracing.*: the connection manager's (which has them with or without tracing, as Envoy's). */
    readonly stats: TracingStats,
  ) {
    const provider = config.provider !== undefined ? obj(config.provider) : bootstrapProvider;
    this.tracer = tracerFor(provider, ctx);
    this.sampling = samplingOfPercents(config);
    this.maxPathTagLength = config.max_path_tag_length === undefined ? 256 : Number(config.max_path_tag_length);
    this.customTags = compileCustomTags(config.custom_tags);
    this.childSpans = ctx.startChildSpan || config.spawn_upstream_span === true;
  }

  /**
   * A routed request: the decision (written into x-request-id), its span (and the router's child),
   * the decorator's header both ways, and the context the upstream gets. Returns what the
   * request's end calls.
   */
  begin(req: DownstreamRequest, res: DownstreamResponse, headers: IncomingHttpHeaders, authority: string, route: RouteTracing | undefined): RequestTrace {
    const reason: TraceReason = decideTrace(headers, route?.sampling ?? this.sampling);
    this.stats.charge(reason);
    const egress = this.ctx.egress;
    let name = route?.decorator?.operation ?? (this.tracer.namesByHost ? authority : egress ? `egress ${authority}` : 'ingress');
    // Ingress: a decorator operation from the caller names the span (and is not echoed back).
    let echo = route?.decorator?.propagate === true;
    const given = headers[DECORATOR_HEADER];
    if (!egress && typeof given === 'string' && given) {
      name = given;
      echo = false;
    }
    delete headers[DECORATOR_HEADER];
    const span = this.tracer.startSpan(headers, name, egress ? 'CLIENT' : 'SERVER', reason !== 'not_traceable');
    if (this.ctx.node.id) span.setTag('node_id', this.ctx.node.id);
    if (echo && !egress) res.setHeader(DECORATOR_HEADER, route!.decorator!.operation);
    if (egress && route?.decorator?.propagate) headers[DECORATOR_HEADER] = route.decorator.operation;
    return new RequestTrace(this, span, req, headers, route);
  }

  get childSpansOn(): boolean {
    return this.childSpans;
  }

  get pathTagLimit(): number {
    return this.maxPathTagLength;
  }

  /** The tags every span of the request ends with: the upstream's answer, and the custom tags. */
  commonTags(span: Span, record: HttpExchangeRecord | undefined, headers: IncomingHttpHeaders, status: number, route: RouteTracing | undefined, routeMetadata: JsonObject | undefined): void {
    span.setTag('component', 'proxy');
    const cluster = record?.upstreamCluster;
    if (cluster) {
      span.setTag('upstream_cluster', cluster);
      span.setTag('upstream_cluster.name', cluster);
    }
    span.setTag('http.status_code', String(status));
    const flags = record ? responseFlagsText(record.responseFlags) : '';
    span.setTag('response_flags', flags || '-');
    if (status === 0 || status >= 500) span.setTag('error', 'true');
    const clusterMetadata = () => (cluster ? obj(this.clusters.get(cluster)?.config.metadata) : undefined);
    for (const tags of [this.customTags, route?.customTags ?? []]) {
      for (const t of tags) {
        const v = t.value(headers, routeMetadata, clusterMetadata);
        if (v !== undefined) span.setTag(t.tag, v);
      }
    }
  }
}

/** One request's spans, from its routing to its end. */
export class RequestTrace {
  private child: Span | undefined;

  constructor(
    private readonly tracing: HttpTracing,
    readonly span: Span,
    private readonly req: DownstreamRequest,
    private readonly headers: IncomingHttpHeaders,
    private readonly route: RouteTracing | undefined,
  ) {}

  /** A health check (the health-check filter's finding): its spans are not reported, nor sampled upstream (Envoy's setSampled(false)). */
  readonly notSampled = (): void => {
    this.span.context.sampled = false;
  };

  /** The request goes upstream to `cluster`: the router's child span, if asked for, and the context the upstream gets. */
  upstream(cluster: string | undefined): void {
    let span = this.span;
    if (this.tracing.childSpansOn && cluster !== undefined) {
      this.child = span.tracer.childSpan(span, `router ${cluster} egress`);
      span = this.child;
    }
    span.tracer.inject(span, this.headers);
  }

  /** The response closed: Envoy's tags on each span, then they finish (sampled ones are reported). */
  finish(record: HttpExchangeRecord | undefined, routeMetadata: JsonObject | undefined, status: number): void {
    const { span, req, headers, tracing } = this;
    const rid = headers['x-request-id'];
    if (typeof rid === 'string') span.setTag('guid:x-request-id', rid);
    const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : String(headers[':scheme'] ?? headers['x-forwarded-proto'] ?? 'http');
    const path = String(headers['x-envoy-original-path'] ?? req.url ?? '');
    const limit = tracing.pathTagLimit;
    span.setTag('http.url', `${scheme}://${String(headers[':authority'] ?? headers.host ?? '')}${path.length > limit ? path.slice(0, limit) : path}`);
    span.setTag('http.method', req.method ?? '');
    span.setTag('downstream_cluster', String(headers['x-envoy-downstream-service-cluster'] ?? '-'));
    span.setTag('user_agent', String(headers['user-agent'] ?? '-'));
    span.setTag('http.protocol', req.httpVersionMajor === 2 ? 'HTTP/2' : `HTTP/${req.httpVersion}`);
    span.setTag('peer.address', remoteOf(req.socket).ip);
    const clientTraceId = headers['x-client-trace-id'];
    if (typeof clientTraceId === 'string') span.setTag('guid:x-client-trace-id', clientTraceId);
    if (record) {
      span.setTag('request_size', String(record.bytesReceived));
      span.setTag('response_size', String(record.bytesSent));
    }
    tracing.commonTags(span, record, headers, status, this.route, routeMetadata);
    if (this.child) {
      const child = this.child;
      if (record?.upstreamHost) {
        child.setTag('upstream_address', record.upstreamHost);
        child.setTag('peer.address', record.upstreamHost);
      }
      tracing.commonTags(child, record, headers, status, this.route, routeMetadata);
      child.finish();
    }
    span.finish();
  }
}
