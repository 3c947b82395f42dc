import type { IncomingHttpHeaders } from 'node:http';
import { fillRandom } from '../random.js';
import type { FilterClusters } from '../http/filter-api.js';

/**
 * A span as this proxy's tracers keep it: ids as lower-case hex, times in microseconds since the
 * epoch, tags as strings. A span that is not sampled is still made (its context propagates, so
 * the next hop and the upstream see the decision) but is never reported.
 */

export type SpanKind = 'SERVER' | 'CLIENT';

export interface SpanContext {
  /** 16 or 32 hex digits. */
  traceId: string;
  /** 16 hex digits. */
  spanId: string;
  parentId?: string;
  sampled: boolean;
  /** Zipkin: the span shares its id with the client span that called (shared_span_context). */
  shared?: boolean;
  /** W3C tracestate, passed on as it came. */
  traceState?: string;
  /** A span made from a context that could not be read (an invalid traceparent): neither reported nor propagated. */
  noop?: boolean;
}

/** What a tracer reaches of the worker: the clusters it reports to, this proxy's node and address. */
export interface TracerServices {
  clusters: FilterClusters;
  node: { id: string; cluster: string };
  /** This proxy's own address (the spans' local endpoint). */
  localAddress: string;
}

export interface Tracer {
  /** The span of a request that arrived with `headers` (propagated context read from them). */
  startSpan(headers: IncomingHttpHeaders, name: string, kind: SpanKind, sampled: boolean): Span;
  /** A child of `parent` (the router's span for the upstream request). */
  childSpan(parent: Span, name: string): Span;
  /** Writes `span`'s context into headers going upstream (B3, traceparent). */
  inject(span: Span, headers: IncomingHttpHeaders): void;
  /** A finished, sampled span goes to the collector (batched, asynchronously). */
  report(span: Span): void;
}

/** Now, in microseconds since the epoch. */
export function nowMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/** `bytes` random bytes as hex (ids), from a pool refilled 4 KiB at a time. */
export function randomHex(bytes: number): string {
  if (poolOffset + bytes > pool.length) {
    fillRandom(pool);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  // An all-zero id is invalid in B3 and W3C alike.
  return /^0+$/.test(hex) ? randomHex(bytes) : hex;
}

export class Span {
  readonly tags: Record<string, string> = {};
  readonly startUs = nowMicros();
  durationUs = 0;
  private finished = false;

  constructor(
    readonly tracer: Tracer,
    readonly context: SpanContext,
    public name: string,
    readonly kind: SpanKind,
  ) {}

  setTag(key: string, value: string): void {
    this.tags[key] = value;
  }

  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.durationUs = Math.max(0, nowMicros() - this.startUs);
    if (this.context.sampled && !this.context.noop) this.tracer.report(this);
  }
}
