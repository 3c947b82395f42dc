import type { IncomingHttpHeaders } from 'node:http';
import { list, obj } from '../../../config/access.js';
import type { JsonObject } from '../../../config/proto-json.js';
import { durationMs, typeNameOfUrl } from '../../../config/wkt.js';
import { getLogger } from '../../../log/logger.js';
import { stats } from '../../../stats/process.js';
import { fixed64, OTLP_EXPORT_METHOD, OTLP_KIND, OTLP_STATUS, otlpType } from '../../../tracing/otlp.js';
import { releaseVersion } from '../../../version.js';
import type { FilterClusters } from '../../../http/filter-api.js';
import { SpanReporter } from '../../../tracing/reporter.js';
import { randomHex, Span, type SpanContext, type SpanKind, type Tracer } from '../../../tracing/span.js';

/**
 * envoy.tracers.opentelemetry: W3C trace context (`traceparent`, `tracestate`) and spans exported
 * as OTLP (ExportTraceServiceRequest, protobuf) over gRPC (`grpc_service`:
 * TraceService/Export) or HTTP (`http_service`: a POST to its URI's path, application/x-protobuf).
 * As Envoy's driver: a valid incoming traceparent gives the span its trace id, its parent and its
 * sampled flag (which wins over this proxy's decision); an invalid one makes the span a no-op
 * (nothing reported or propagated); without one the span starts a trace. The resource has
 * `service.name` (`service_name`, default `unknown_service:envoy`) and what the environment
 * (OTEL_RESOURCE_ATTRIBUTES) and static resource detectors give. A span's status is ERROR for a
 * 5xx (a CLIENT span: 4xx too). Figures: tracing.opentelemetry.{spans_sent,timer_flushed,spans_dropped}.
 */

const log = getLogger('tracing', import.meta.url);
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ENVIRONMENT_DETECTOR = 'envoy.extensions.tracers.opentelemetry.resource_detectors.v3.EnvironmentResourceDetectorConfig';
const STATIC_DETECTOR = 'envoy.extensions.tracers.opentelemetry.resource_detectors.v3.StaticConfigResourceDetectorConfig';

/** OTEL_RESOURCE_ATTRIBUTES: `key=value,key=value`, values percent-decoded. */
function environmentAttributes(): [string, string][] {
  const raw = process.env.OTEL_RESOURCE_ATTRIBUTES ?? '';
  const out: [string, string][] = [];
  for (const pair of raw.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    try {
      out.push([decodeURIComponent(pair.slice(0, eq).trim()), decodeURIComponent(pair.slice(eq + 1).trim())]);
    } catch {
      // not percent-encoded properly: skipped, as the OpenTelemetry SDKs skip it
    }
  }
  return out;
}

/** The resource's attributes: service.name, then each detector's, in order. */
function resourceAttributes(config: JsonObject): Map<string, string> {
  const attributes = new Map<string, string>([['service.name', typeof config.service_name === 'string' && config.service_name ? config.service_name : 'unknown_service:envoy']]);
  for (const d of list(config.resource_detectors)) {
    const typed = obj(d.typed_config);
    const type = typeNameOfUrl(String(typed['@type'] ?? ''));
    if (type === ENVIRONMENT_DETECTOR) for (const [k, v] of environmentAttributes()) attributes.set(k, v);
    else if (type === STATIC_DETECTOR) for (const [k, v] of Object.entries(obj(typed.attributes))) attributes.set(k, String(v));
  }
  return attributes;
}

const keyValue = (key: string, value: string) => ({ key, value: { stringValue: value } });

export class OpenTelemetryTracer implements Tracer {
  private readonly resource: { attributes: { key: string; value: { stringValue: string } }[] };
  private readonly reporter: SpanReporter;
  private readonly export: (body: Buffer) => Promise<void>;

  constructor(
    config: JsonObject,
    private readonly clusters: FilterClusters,
  ) {
    this.resource = { attributes: [...resourceAttributes(config)].map(([k, v]) => keyValue(k, v)) };
    const p = 'tracing.opentelemetry.';
    this.reporter = new SpanReporter('opentelemetry', { spansSent: stats.counter(`${p}spans_sent`), timerFlushed: stats.counter(`${p}timer_flushed`), spansDropped: stats.counter(`${p}spans_dropped`) }, (spans) => this.send(spans));
    if (config.grpc_service !== undefined) {
      const grpc = obj(config.grpc_service);
      const clusterName = String(obj(grpc.envoy_grpc).cluster_name);
      const timeoutMs = typeof grpc.timeout === 'string' ? durationMs(grpc.timeout) : 5000;
      this.export = async (body) => {
        const cluster = this.clusters.get(clusterName);
        if (!cluster) throw new Error(`cluster '${clusterName}' is not configured`);
        await cluster.grpcUnaryBytes(OTLP_EXPORT_METHOD, body, timeoutMs);
      };
    } else {
      const http = obj(obj(config.http_service).http_uri);
      const clusterName = String(http.cluster);
      const url = new URL(String(http.uri), 'http://collector');
      const timeoutMs = typeof http.timeout === 'string' ? durationMs(http.timeout) : 5000;
      const extra: string[] = [];
      for (const h of list(obj(config.http_service).request_headers_to_add)) extra.push(String(obj(h.header).key).toLowerCase(), String(obj(h.header).value ?? ''));
      this.export = async (body) => {
        const cluster = this.clusters.get(clusterName);
        if (!cluster) throw new Error(`[cluster = ${clusterName}] is not configured`);
        const res = await cluster.send({
          method: 'POST',
          path: url.pathname + url.search,
          headers: ['host', url.host, 'content-type', 'application/x-protobuf', 'user-agent', `OTel-OTLP-Exporter-Envoy/${releaseVersion}`, ...extra],
          body,
          timeoutMs,
        });
        if (res.status !== 200) throw new Error(`the collector answered ${res.status}`);
      };
    }
  }

  startSpan(headers: IncomingHttpHeaders, name: string, kind: SpanKind, sampled: boolean): Span {
    const traceparent = headers.traceparent;
    let context: SpanContext;
    if (traceparent === undefined) context = { traceId: randomHex(16), spanId: randomHex(8), sampled };
    else {
      const m = typeof traceparent === 'string' ? TRACEPARENT.exec(traceparent) : null;
      if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) {
        // As Envoy's: an invalid traceparent makes a span that is neither reported nor propagated.
        return new Span(this, { traceId: '', spanId: '', sampled: false, noop: true }, name, kind);
      }
      const traceState = headers.tracestate;
      context = {
        traceId: m[1]!,
        spanId: randomHex(8),
        parentId: m[2]!,
        sampled: (Number.parseInt(m[3]!, 16) & 1) === 1,
        ...(typeof traceState === 'string' ? { traceState } : {}),
      };
    }
    return new Span(this, context, name, kind);
  }

  childSpan(parent: Span, name: string): Span {
    const c = parent.context;
    return new Span(this, { traceId: c.traceId, spanId: randomHex(8), parentId: c.spanId, sampled: c.sampled, ...(c.traceState !== undefined ? { traceState: c.traceState } : {}) }, name, 'CLIENT');
  }

  inject(span: Span, headers: IncomingHttpHeaders): void {
    const c = span.context;
    if (c.noop) return;
    headers.traceparent = `00-${c.traceId}-${c.spanId}-${c.sampled ? '01' : '00'}`;
    headers.tracestate = c.traceState ?? '';
  }

  report(span: Span): void {
    this.reporter.report(span);
  }

  /** The batch as one ExportTraceServiceRequest. */
  encode(spans: Span[]): Buffer {
    const otlpSpans = spans.map((s) => {
      const status = Number(s.tags['http.status_code'] ?? 0);
      const error = status >= 500 || status === 0 || (s.kind === 'CLIENT' && status >= 400);
      const start = BigInt(s.startUs) * 1000n;
      return {
        traceId: Buffer.from(s.context.traceId, 'hex'),
        spanId: Buffer.from(s.context.spanId, 'hex'),
        ...(s.context.traceState ? { traceState: s.context.traceState } : {}),
        ...(s.context.parentId ? { parentSpanId: Buffer.from(s.context.parentId, 'hex') } : {}),
        name: s.name,
        kind: OTLP_KIND[s.kind],
        startTimeUnixNano: fixed64(start),
        endTimeUnixNano: fixed64(start + BigInt(s.durationUs) * 1000n),
        attributes: Object.entries(s.tags).map(([k, v]) => keyValue(k, v)),
        status: { code: error ? OTLP_STATUS.ERROR : OTLP_STATUS.UNSET },
      };
    });
    const request = { resourceSpans: [{ resource: this.resource, scopeSpans: [{ scope: { name: 'envoy', version: releaseVersion }, spans: otlpSpans }] }] };
    return Buffer.from(otlpType('ExportTraceServiceRequest').encode(request as never).finish());
  }

  private async send(spans: Span[]): Promise<void> {
    try {
      await this.export(this.encode(spans));
    } catch (err) {
      log.debug(`opentelemetry: exporting ${spans.length} span(s) failed: ${(err as Error).message}`);
    }
  }
}
