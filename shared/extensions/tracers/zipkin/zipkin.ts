import type { IncomingHttpHeaders } from 'node:http';
import { isIPv4 } from 'node:net';
import { protobufjs } from '../../../protobufjs.js';
import type { JsonObject } from '../../../config/proto-json.js';
import { getLogger } from '../../../log/logger.js';
import { runtimeValue } from '../../../runtime.js';
import { stats } from '../../../stats/process.js';
import type { Counter } from '../../../stats/store.js';
import type { FilterClusters } from '../../../http/filter-api.js';
import { SpanReporter } from '../../../tracing/reporter.js';
import { randomHex, Span, type SpanContext, type SpanKind, type Tracer } from '../../../tracing/span.js';

/**
 * envoy.tracers.zipkin: B3 propagation (the single `b3` header first, else x-b3-*; an incoming
 * sampled flag overrides this proxy's decision) and spans posted to `collector_endpoint` of
 * `collector_cluster` as Zipkin's JSON v2 (HTTP_JSON) or its proto3 ListOfSpans (HTTP_PROTO).
 * As Envoy's driver: a root span's id is its trace id; a SERVER span shares the id of the
 * client span that called it (`shared_span_context`, default on) and says so (`shared`); a CLIENT
 * span gets an id of its own. Spans are named after the request's host unless a decorator names
 * them. Figures: tracing.zipkin.{spans_sent,timer_flushed,reports_sent,reports_dropped,
 * reports_failed,reports_skipped_no_cluster,spans_dropped}.
 */

const log = getLogger('tracing', import.meta.url);
const HEX = /^[0-9a-f]+$/i;

export interface LocalEndpoint {
  serviceName: string;
  ip: string;
}

interface ZipkinStats {
  spansSent: Counter;
  timerFlushed: Counter;
  spansDropped: Counter;
  reportsSent: Counter;
  reportsDropped: Counter;
  reportsFailed: Counter;
  reportsSkippedNoCluster: Counter;
}

function zipkinStats(): ZipkinStats {
  const p = 'tracing.zipkin.';
  return {
    spansSent: stats.counter(`${p}spans_sent`),
    timerFlushed: stats.counter(`${p}timer_flushed`),
    spansDropped: stats.counter(`${p}spans_dropped`),
    reportsSent: stats.counter(`${p}reports_sent`),
    reportsDropped: stats.counter(`${p}reports_dropped`),
    reportsFailed: stats.counter(`${p}reports_failed`),
    reportsSkippedNoCluster: stats.counter(`${p}reports_skipped_no_cluster`),
  };
}

/** The context B3 headers carry, or undefined (none, or malformed: then the request starts a trace of its own). */
function extractB3(headers: IncomingHttpHeaders): { context?: Omit<SpanContext, 'sampled'>; sampled?: boolean } {
  const single = headers.b3;
  if (typeof single === 'string' && single) {
    const parts = single.split('-');
    if (parts.length === 1) return { sampled: parts[0] !== '0' };
    const [traceId, spanId, flag, parentId] = parts;
    const sampled = flag === undefined ? undefined : flag !== '0';
    if (!traceId || !spanId || !HEX.test(traceId) || !HEX.test(spanId) || (traceId.length !== 16 && traceId.length !== 32) || spanId.length !== 16) return {};
    return { context: { traceId: traceId.toLowerCase(), spanId: spanId.toLowerCase(), ...(parentId && HEX.test(parentId) ? { parentId: parentId.toLowerCase() } : {}) }, ...(sampled !== undefined ? { sampled } : {}) };
  }
  const sampledHeader = headers['x-b3-sampled'];
  const sampled = typeof sampledHeader === 'string' ? sampledHeader === '1' || sampledHeader.toLowerCase() === 'true' : undefined;
  const traceId = headers['x-b3-traceid'];
  const spanId = headers['x-b3-spanid'];
  if (typeof traceId !== 'string' || typeof spanId !== 'string' || !HEX.test(traceId) || !HEX.test(spanId) || (traceId.length !== 16 && traceId.length !== 32) || spanId.length !== 16) {
    return sampled !== undefined ? { sampled } : {};
  }
  const parent = headers['x-b3-parentspanid'];
  return {
    context: { traceId: traceId.toLowerCase(), spanId: spanId.toLowerCase(), ...(typeof parent === 'string' && HEX.test(parent) && parent.length === 16 ? { parentId: parent.toLowerCase() } : {}) },
    ...(sampled !== undefined ? { sampled } : {}),
  };
}

/** Zipkin's proto3 ListOfSpans, written field by field (zipkin.proto3). */
function encodeProto(spans: Span[], local: LocalEndpoint): Uint8Array {
  const { Writer } = protobufjs();
  const w = Writer.create();
  for (const s of spans) {
    const span = Writer.create();
    span.uint32((1 << 3) | 2).bytes(Buffer.from(s.context.traceId, 'hex'));
    if (s.context.parentId) span.uint32((2 << 3) | 2).bytes(Buffer.from(s.context.parentId, 'hex'));
    span.uint32((3 << 3) | 2).bytes(Buffer.from(s.context.spanId, 'hex'));
    span.uint32((4 << 3) | 0).int32(s.kind === 'CLIENT' ? 1 : 2);
    span.uint32((5 << 3) | 2).string(s.name);
    span.uint32((6 << 3) | 1).fixed64(s.startUs);
    span.uint32((7 << 3) | 0).uint64(s.durationUs);
    const endpoint = Writer.create();
    endpoint.uint32((1 << 3) | 2).string(local.serviceName);
    if (isIPv4(local.ip)) endpoint.uint32((2 << 3) | 2).bytes(Buffer.from(local.ip.split('.').map(Number)));
    span.uint32((8 << 3) | 2).bytes(endpoint.finish());
    for (const [k, v] of Object.entries(s.tags)) {
      const entry = Writer.create();
      entry.uint32((1 << 3) | 2).string(k);
      entry.uint32((2 << 3) | 2).string(v);
      span.uint32((11 << 3) | 2).bytes(entry.finish());
    }
    if (s.context.shared) span.uint32((13 << 3) | 0).bool(true);
    w.uint32((1 << 3) | 2).bytes(span.finish());
  }
  return w.finish();
}

function encodeJson(spans: Span[], local: LocalEndpoint): string {
  const endpoint = { serviceName: local.serviceName, ...(isIPv4(local.ip) ? { ipv4: local.ip } : { ipv6: local.ip }) };
  return JSON.stringify(
    spans.map((s) => ({
      traceId: s.context.traceId,
      ...(s.context.parentId ? { parentId: s.context.parentId } : {}),
      id: s.context.spanId,
      kind: s.kind,
      name: s.name,
      timestamp: s.startUs,
      duration: s.durationUs,
      localEndpoint: endpoint,
      tags: s.tags,
      ...(s.context.shared ? { shared: true } : {}),
    })),
  );
}

export class ZipkinTracer implements Tracer {
  /** Zipkin names a span after the request's host. */
  readonly namesByHost = true;
  private readonly clusterName: string;
  private readonly endpoint: string;
  private readonly hostname: string;
  private readonly traceId128: boolean;
  private readonly shared: boolean;
  private readonly proto: boolean;
  private readonly stats = zipkinStats();
  private readonly reporter: SpanReporter;

  constructor(
    config: JsonObject,
    private readonly clusters: FilterClusters,
    private readonly local: LocalEndpoint,
  ) {
    this.clusterName = String(config.collector_cluster);
    this.endpoint = String(config.collector_endpoint);
    this.hostname = typeof config.collector_hostname === 'string' && config.collector_hostname ? config.collector_hostname : this.clusterName;
    this.traceId128 = config.trace_id_128bit === true;
    this.shared = config.shared_span_context !== false;
    this.proto = config.collector_endpoint_version === 'HTTP_PROTO';
    this.reporter = new SpanReporter('zipkin', this.stats, (spans) => this.send(spans));
  }

  startSpan(headers: IncomingHttpHeaders, name: string, kind: SpanKind, sampled: boolean): Span {
    const b3 = extractB3(headers);
    const decided = b3.sampled ?? sampled;
    const parent = b3.context;
    let context: SpanContext;
    if (!parent) {
      const traceId = randomHex(this.traceId128 ? 16 : 8);
      context = { traceId, spanId: traceId.slice(-16), sampled: decided };
    } else if (kind === 'SERVER' && this.shared) {
      context = { traceId: parent.traceId, spanId: parent.spanId, ...(parent.parentId ? { parentId: parent.parentId } : {}), sampled: decided, shared: true };
    } else {
      context = { traceId: parent.traceId, spanId: randomHex(8), parentId: parent.spanId, sampled: decided };
    }
    return new Span(this, context, name, kind);
  }

  childSpan(parent: Span, name: string): Span {
    return new Span(this, { traceId: parent.context.traceId, spanId: randomHex(8), parentId: parent.context.spanId, sampled: parent.context.sampled }, name, 'CLIENT');
  }

  inject(span: Span, headers: IncomingHttpHeaders): void {
    const c = span.context;
    headers['x-b3-traceid'] = c.traceId;
    headers['x-b3-spanid'] = c.spanId;
    if (c.parentId) headers['x-b3-parentspanid'] = c.parentId;
    else delete headers['x-b3-parentspanid'];
    headers['x-b3-sampled'] = c.sampled ? '1' : '0';
  }

  report(span: Span): void {
    this.reporter.report(span);
  }

  private async send(spans: Span[]): Promise<void> {
    const cluster = this.clusters.get(this.clusterName);
    if (!cluster) {
      this.stats.reportsSkippedNoCluster.inc();
      return;
    }
    const body = this.proto ? Buffer.from(encodeProto(spans, this.local)) : Buffer.from(encodeJson(spans, this.local));
    try {
      const timeoutMs = Number(runtimeValue('tracing.zipkin.request_timeout') ?? 5000) || 5000;
      const res = await cluster.send({
        method: 'POST',
        path: this.endpoint,
        headers: ['host', this.hostname, 'content-type', this.proto ? 'application/x-protobuf' : 'application/json'],
        body,
        timeoutMs,
      });
      (res.status === 202 ? this.stats.reportsSent : this.stats.reportsDropped).inc();
    } catch (err) {
      log.debug(`zipkin: sending ${spans.length} span(s) to cluster '${this.clusterName}' failed: ${(err as Error).message}`);
      this.stats.reportsFailed.inc();
    }
  }

  close(): void {
    this.reporter.close();
  }
}
