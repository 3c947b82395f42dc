import type { IncomingHttpHeaders } from 'node:http';
import { ResponseFlag } from '../../shared/access-log/entry.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { StreamDurationPolicy } from '../../shared/http/route-table.js';
import type { DownstreamResponse } from './downstream.js';
import type { HttpExchangeRecord } from './exchange-record.js';
import { sendLocalReply, type LocalReplyContext } from './local-reply.js';
import type { UpgradeRequest } from './upgrade-router.js';

/**
 * A stream's maximum duration, as Envoy's connection manager keeps it: the connection manager's
 * common_http_protocol_options.max_stream_duration from the stream's start, which the route's
 * max_stream_duration replaces once the request is routed (ActiveStream::refreshDurationTimeout):
 * its `max_stream_duration` (0: none), or for a gRPC request with a `grpc-timeout` header and
 * `grpc_timeout_header_max`, that header capped by it and less `grpc_timeout_header_offset`. A
 * gRPC request routed so gets that timeout in its `grpc-timeout` upstream (none when there is
 * none). Reached, the stream is answered `408 downstream duration timeout` (gRPC:
 * DEADLINE_EXCEEDED), or cut if its response has begun: flag DT, `downstream_rq_max_duration_reached`.
 */

/** grpc-timeout's greatest value: 8 digits. */
const MAX_GRPC_TIMEOUT_VALUE = 99_999_999;
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/** Envoy's Grpc::Common::getGrpcTimeout: the header's value in ms (sub-millisecond units round up), or undefined if it has none or it does not parse. */
export function grpcTimeoutMs(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.length < 2 || v.length > 9) return undefined;
  const unit = UNIT_MS[v[v.length - 1]!];
  const digits = v.slice(0, -1);
  if (unit === undefined || !/^\d+$/.test(digits)) return undefined;
  return Math.ceil(Number(digits) * unit);
}

/** Envoy's Grpc::Common::toGrpcTimeout: ms, or coarser units when it does not fit in 8 digits. */
export function grpcTimeoutHeader(ms: number): string {
  let time = Math.floor(ms);
  for (const [unit, factor] of [['m', 1], ['S', 1000], ['M', 60], ['H', 60]] as const) {
    if (unit !== 'm') time = Math.floor(time / factor);
    if (time <= MAX_GRPC_TIMEOUT_VALUE || unit === 'H') return `${Math.min(time, MAX_GRPC_TIMEOUT_VALUE)}${unit}`;
  }
  return `${MAX_GRPC_TIMEOUT_VALUE}H`;
}

/** The stream's duration limit the route sets, in ms (0: none), or undefined when it leaves the connection manager's in force. */
function routeLimitMs(policy: StreamDurationPolicy, headers: IncomingHttpHeaders, grpc: boolean): number | undefined {
  const header = grpc && policy.grpcHeaderMaxMs !== undefined ? grpcTimeoutMs(headers['grpc-timeout']) : undefined;
  if (header === undefined) return policy.maxMs;
  let ms = header;
  if (policy.grpcHeaderMaxMs! > 0 && ms > policy.grpcHeaderMaxMs!) ms = policy.grpcHeaderMaxMs!;
  const offset = policy.grpcHeaderOffsetMs ?? 0;
  if (ms !== 0 && offset > 0) ms = offset < ms ? ms - offset : 0;
  return ms;
}

export class StreamDuration {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: DownstreamResponse,
    private readonly startedMs: number,
    private readonly stats: HttpStats,
    private readonly answer: { reply: LocalReplyContext; record: HttpExchangeRecord | undefined; upgrade: UpgradeRequest | undefined },
  ) {
    res.once('close', () => clearTimeout(this.timer));
  }

  /** The limit from the stream's start: it fires that long after the stream began (at once if that is past); 0 clears it. */
  limit(ms: number): void {
    clearTimeout(this.timer);
    this.timer = ms > 0 ? setTimeout(() => this.reached(), Math.max(0, ms - (performance.now() - this.startedMs))) : undefined;
  }

  /**
   * The request is routed: a route with max_stream_duration replaces the limit (see routeLimitMs),
   * and a gRPC request's grpc-timeout says what is left of it.
   */
  routed(policy: StreamDurationPolicy, headers: IncomingHttpHeaders, grpc: boolean, connectionManagerMs: number): void {
    const ms = routeLimitMs(policy, headers, grpc) ?? connectionManagerMs;
    if (grpc) {
      if (ms > 0) headers['grpc-timeout'] = grpcTimeoutHeader(ms);
      else delete headers['grpc-timeout'];
    }
    this.limit(ms);
  }

  private reached(): void {
    const { res, stats } = this;
    const { reply, record, upgrade } = this.answer;
    if (res.writableEnded) return;
    stats.rqMaxDurationReached.inc();
    if (upgrade?.tunnel) {
      // An upgraded stream has no response left to send: it is cut, as Envoy resets it.
      upgrade.tunnel.cut(ResponseFlag.durationTimeout, 'max_duration_timeout');
      return;
    }
    if (record) {
      record.responseFlags |= ResponseFlag.durationTimeout;
      record.responseCodeDetails = 'max_duration_timeout';
    }
    sendLocalReply(res, 408, 'downstream duration timeout', reply.grpc ? { ...reply, extraHeaders: { ...reply.extraHeaders, 'grpc-status': '4' } } : reply);
  }
}
