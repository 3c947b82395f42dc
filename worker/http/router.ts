import type { IncomingHttpHeaders } from 'node:http';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import { featureEnabled } from '../../shared/runtime.js';
import { Readable } from 'node:stream';
import { getLogger } from '../../shared/log/logger.js';
import { ResponseFlag } from '../../shared/access-log/entry.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { Cluster, ClusterManager, Host } from '../upstream/cluster.js';
import type { HttpExchangeRecord } from './exchange-record.js';
import { LocalReply, sendLocalReply, type LocalReplyContext } from './local-reply.js';
import { applyHeaderMutations, type HeaderMutationLevel, type MutableHeaders } from '../../shared/header-mutation.js';
import type { AccessLogEntry } from '../../shared/access-log/entry.js';
import { outcomeOfStatus } from '../../shared/upstream/outcomes.js';
import { countRequestOverflow, type CircuitBreaker } from '../upstream/circuit-breaker.js';
import type { Http1Pool } from '../upstream/http1-pool.js';
import type { ForwardAction } from './route-table.js';
import { RetryState, type RetryAccounting, type RetryStatus } from './retry-state.js';
import { ABORT, classify, connectLog, FAILURE_LOG, resetLog, resetReason, type Failure } from './upstream-failures.js';
import { routeTimeouts, type RouteTimeouts } from './route-timeouts.js';
import type { UpstreamController, UpstreamHandler } from '../upstream/upstream-handler.js';
import { readBody, requestHasBody } from './request-body.js';
import { HOP_BY_HOP, upstreamHeaders } from './upstream-headers.js';
import { addDeadline, removeDeadline, type DeadlineList, type Deadlined } from '../deadlines.js';

/**
 * The router filter: picks the cluster (weighted if asked) and a host, forwards the request over
 * the host's keep-alive pool, and streams the response back. Retries are decided by the request's
 * retry state (retry-state.ts: the route's retry_policy and the request's x-envoy-retry-* headers)
 * and need a replayable body: a request body with a content-length of up to 64 KiB is buffered
 * when retries are possible (as Envoy buffers for retries); a larger or chunked one streams, once.
 * The route's timeouts may be overridden by an internal request's x-envoy-upstream-rq-timeout-ms
 * and x-envoy-upstream-rq-per-try-timeout-ms (see routeTimeouts).
 *
 * Hot path (measured with `PROFILE=1 npm run bench`): the upstream connection calls this class
 * back (upstream-handler.ts), so a request costs one object and its timers, with no AbortController,
 * no Readable for the response body and no stream pipeline; headers go to writeHead as a flat
 * array, which Node writes without building a header map.
 */

const log = getLogger('router', import.meta.url);

const RETRY_BUFFER_LIMIT = 64 * 1024;

export interface ForwardContext {
  /** The connection manager's figures (no_cluster). */
  stats: HttpStats;
  clusters: ClusterManager;
  serverName: string;
  /** The listener's per_connection_buffer_limit_bytes: what the client's side may hold unwritten. */
  bufferLimit: number;
  /** How this request's local replies are made (local_reply_config). */
  reply: LocalReplyContext;
  /** The route's response header mutations, with what their values are formatted from. */
  responseHeaders?: { levels: HeaderMutationLevel[]; entry: AccessLogEntry };
  /** The HTTP filters' view of the response headers, after the route's mutations. */
  encode?: (status: number, headers: MutableHeaders) => void;
  /** The HTTP filters' view of the upstream's trailers. */
  encodeTrailers?: (trailers: MutableHeaders) => void;
  /** http_protocol_options.enable_trailers: trailers go to an HTTP/1.1 client too (chunked responses only). */
  http1Trailers?: boolean;
  /** scheme_header_transformation.match_upstream: an HTTP/2 upstream's :scheme is its connection's transport. */
  schemeMatchesUpstream?: boolean;
  /** The request headers as they go upstream (x-forwarded-for, x-request-id … already set). */
  headers: IncomingHttpHeaders;
  /** The path after any prefix rewrite. */
  path: string;
  authority: string;
  /** The access-log entry, when the listener logs. */
  record?: HttpExchangeRecord;
  /** The cluster chosen when the request was routed (one of weighted_clusters, by weight). */
  clusterName: string | undefined;
  /** The request body as filters left it: read whole (buffer), or a stream of it transformed (decompressor). */
  body?: Buffer | Readable;
  /** The route's hash_policy result: the hash a RING_HASH or MAGLEV cluster picks by, and cookies it generated. */
  hash?: bigint;
  setCookies?: string[];
}


/**
 * An HTTP/2 upstream's headers-only answer, set and not written: the end that follows sends it as
 * one HEADERS frame that ends the stream, as it came (HEADERS then an empty DATA would not be a
 * gRPC trailers-only reply).
 */
function setHeadOnly(res: DownstreamResponse, status: number, flat: string[]): void {
  res.statusCode = status;
  const grouped = new Map<string, string[]>();
  for (let i = 0; i < flat.length; i += 2) {
    const values = grouped.get(flat[i]!);
    if (values) values.push(flat[i + 1]!);
    else grouped.set(flat[i]!, [flat[i + 1]!]);
  }
  for (const [k, v] of grouped) res.setHeader(k, v.length === 1 ? v[0]! : v);
}

function hasAny(headers: object): boolean {
  for (const _ in headers) return true;
  return false;
}

/**
 * The upstream's response headers as the client gets them: the route's response_headers_to_add
 * and _to_remove, then the HTTP filters', on a copy (the upstream's stay as they came); without
 * hop-by-hop headers (`keep` aside: an upgrade's Upgrade and Connection); with this proxy's
 * server header and x-envoy-upstream-service-time. A flat [name, value, …] list.
 */
export function downstreamResponseHeaders(statusCode: number, headers: IncomingHttpHeaders, ctx: ForwardContext, startedMs: number, keep?: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const mutations = ctx.responseHeaders;
  const encode = ctx.encode;
  let source: Record<string, unknown> = headers;
  if (mutations || encode) {
    const copy: MutableHeaders = { ...headers };
    if (mutations) applyHeaderMutations(copy, mutations.levels, Object.create(mutations.entry, { responseCode: { value: statusCode } }) as AccessLogEntry);
    encode?.(statusCode, copy);
    source = copy;
  }
  for (const k in source) {
    const v = source[k] as string | string[] | number | undefined;
    if (v === undefined || (HOP_BY_HOP.has(k) && !keep?.has(k)) || k === 'server' || k.charCodeAt(0) === 58 /* ':' */) continue;
    if (typeof v !== 'object') out.push(k, String(v));
    else for (const item of v) out.push(k, item);
  }
  out.push('server', ctx.serverName, 'x-envoy-upstream-service-time', String(Math.round(performance.now() - startedMs)));
  for (const cookie of ctx.setCookies ?? []) out.push('set-cookie', cookie);
  return out;
}

/** The response flag of a retry that was due and refused: URX for the limit, UO for the breaker. */
function retryRefusalFlag(decision: RetryStatus): number {
  if (decision === 'limit') return ResponseFlag.upstreamRetryLimitExceeded;
  if (decision === 'overflow') return ResponseFlag.upstreamOverflow;
  return 0;
}

/** One downstream request on its way upstream: the dispatch handler for each of its tries. */
class Exchange implements UpstreamHandler, Deadlined {
  private host: Host | undefined;
  /** The host of the try that just ended (for figures recorded after it). */
  private lastHost: Host | undefined;
  private controller: UpstreamController | undefined;
  /** The current try's HTTP/1.1 pool (where it may wait for a connection). */
  private pool: Http1Pool | undefined;
  /** The current try's response is a retriable failure: swallow its body, then try again. */
  private discarding = false;
  /** The route's timeout (see ../deadlines.ts: a list's links, not a timer of its own). */
  deadlineAt = 0;
  deadlineList: DeadlineList | undefined = undefined;
  deadlinePrev: Deadlined | undefined = undefined;
  deadlineNext: Deadlined | undefined = undefined;
  private perTryTimer: NodeJS.Timeout | undefined;
  /** The cluster's max_stream_duration, from the moment the try has its upstream stream. */
  private streamTimer: NodeJS.Timeout | undefined;
  /** per_try_idle_timeout: restarted by each piece of the try's response. */
  private idleTimer: NodeJS.Timeout | undefined;
  /** Waiting before a retry (Envoy's back-off). */
  private backoffTimer: NodeJS.Timeout | undefined;
  private done = false;
  private readonly started = performance.now();
  /** When the client's request was read whole (the route's timeout runs from then). */
  private requestDoneAt: number | undefined;
  private tryStarted = 0;
  private retried = false;
  /** Some try's request reached its connection (Envoy's upstream_request_started, for reset-before-request). */
  private requestStarted = false;
  /** Where x-envoy-expected-rq-timeout-ms's value is in `headers` (a retry sends the time left). */
  private readonly expectedAt: number;
  /** Circuit-breaker units this exchange holds: a pending dispatch, the request (the retry unit is the retry state's). */
  private pendingHeld = false;
  private rqHeld = false;
  private readonly breaker: CircuitBreaker;
  private readonly headers: string[];
  private readonly onClose = () => {
    if (!this.done) this.abort(ABORT.client);
  };

  constructor(
    private readonly req: DownstreamRequest,
    private readonly res: DownstreamResponse,
    private readonly action: ForwardAction,
    private readonly cluster: Cluster,
    private readonly ctx: ForwardContext,
    private body: Buffer | Readable | null,
    private readonly retry: RetryState | undefined,
    private readonly timeouts: RouteTimeouts,
  ) {
    this.breaker = cluster.breakers[action.priority];
    // x-envoy-expected-rq-timeout-ms: the per-try timeout if there is one, else the whole one.
    this.headers = upstreamHeaders(ctx.headers, ctx.authority, timeouts.perTryMs || timeouts.globalMs);
    this.expectedAt = timeouts.perTryMs || timeouts.globalMs ? this.headers.length - 1 : -1;
    if (ctx.record) ctx.record.upstreamCluster = cluster.name;
    cluster.stats.rqActive.inc();
    // As Envoy's router (onRequestComplete): the route's timeout runs from the end of the client's
    // request, so an upload longer than the timeout is not cut off midway.
    if (body === null || Buffer.isBuffer(body) || req.complete) this.requestDoneAt = this.started;
    else req.once('end', () => this.requestComplete());
    if (timeouts.globalMs > 0 && this.requestDoneAt !== undefined) addDeadline(this, this.started, timeouts.globalMs);
    // on, not once: a response closes once, and once's wrapper and its removal cost every request.
    res.on('close', this.onClose);
  }

  /** The client's request has been read whole (its body streamed): the route's timeout starts, and a try's per-try timeout. */
  private requestComplete(): void {
    if (this.done) return;
    this.requestDoneAt = performance.now();
    if (this.timeouts.globalMs > 0) addDeadline(this, this.requestDoneAt, this.timeouts.globalMs);
    if (this.controller) this.armPerTryTimeout();
  }

  /** The try's per-try timeout, from when it has its connection and the client's request is whole (Envoy's onPoolReady / onRequestComplete). */
  private armPerTryTimeout(): void {
    const perTry = this.timeouts.perTryMs;
    if (perTry > 0 && !this.perTryTimer) this.perTryTimer = setTimeout(() => this.abort(ABORT.perTry), perTry);
  }

  /** The per-try idle timeout, (re)started when the try gets its connection and by each piece of its response. */
  private touchIdle(): void {
    if (this.idleTimer) this.idleTimer.refresh();
    else this.idleTimer = setTimeout(() => this.perTryIdle(), this.timeouts.perTryIdleMs);
  }

  private perTryIdle(): void {
    this.idleTimer = undefined;
    this.cluster.stats.rqPerTryIdleTimeout.inc();
    this.abort(ABORT.perTryIdle);
  }

  /** The route's timeout passed before the response ended. */
  deadlineReached(): void {
    this.abort(ABORT.timeout);
  }

  /** The first try, once the breaker admits the request (max_requests; a refusal is an active-request overflow, see countRequestOverflow). */
  begin(): void {
    if (!this.breaker.tryAcquire('rq')) {
      countRequestOverflow(this.breaker.overflow);
      this.overflow();
      return;
    }
    this.rqHeld = true;
    this.start();
  }

  private start(): void {
    // A retry's host: the retry predicates may reject a pick (previous_hosts, omit_canary_hosts), and previous_priorities steer the priority.
    const host = this.retried && this.retry ? this.cluster.pickHost(this.ctx.hash, this.retry) : this.cluster.pickHost(this.ctx.hash);
    if (!host) {
      this.cluster.stats.cxNoneHealthy.inc();
      const record = this.ctx.record;
      if (record) {
        record.responseFlags |= ResponseFlag.noHealthyUpstream;
        record.responseCodeDetails = 'no_healthy_upstream';
      }
      this.chargeLocalReply(LocalReply.noHealthyUpstream.status);
      this.localReply(LocalReply.noHealthyUpstream);
      return;
    }
    if (!this.breaker.tryAcquire('pending')) {
      this.breaker.overflow.pending.inc();
      this.overflow();
      return;
    }
    this.pendingHeld = true;
    this.cluster.stats.rqPendingTotal.inc();
    this.cluster.stats.rqPendingActive.inc();
    this.host = host;
    this.retry?.onHostAttempted(host, host.info.priority);
    const record = this.ctx.record;
    if (record) {
      record.upstreamHost = host.address;
      record.attemptCount = (record.attemptCount ?? 0) + 1;
    }
    if (this.retried && this.expectedAt >= 0) this.headers[this.expectedAt] = String(this.expectedTimeoutMs());
    host.activeRequests++;
    host.stats.rqTotal.inc();
    host.stats.rqActive.inc();
    this.cluster.stats.rqTotal.inc();
    this.tryStarted = performance.now();
    this.discarding = false;
    this.controller = undefined;
    if (this.cluster.http2) {
      host.h2Connection(this.action.priority).request(this.req.method ?? 'GET', this.scheme(), this.ctx.path, this.headers, this.body, this);
      return;
    }
    this.pool = host.connectionPool(this.action.priority);
    this.pool.dispatch({ path: this.ctx.path, method: this.req.method ?? 'GET', headers: this.headers, body: this.body }, this);
  }

  /**
   * The :scheme an HTTP/2 upstream gets: the request's (an HTTP/2 client's, scheme_to_overwrite's,
   * else the client connection's transport), or with match_upstream the upstream connection's.
   */
  private scheme(): string {
    if (this.ctx.schemeMatchesUpstream) return this.cluster.tls ? 'https' : 'http';
    const given = this.ctx.headers[':scheme'];
    if (typeof given === 'string') return given;
    return (this.req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  }

  /** A retry's x-envoy-expected-rq-timeout-ms: the per-try timeout (else the whole), never above what the whole timeout has left (at least 1). */
  private expectedTimeoutMs(): number {
    const { perTryMs, globalMs } = this.timeouts;
    if (globalMs === 0) return perTryMs;
    const left = Math.max(1, Math.round(globalMs - (performance.now() - (this.requestDoneAt ?? this.started))));
    return Math.min(perTryMs || globalMs, left);
  }

  onRequestStart(controller: UpstreamController): void {
    this.releasePending();
    this.controller = controller;
    if (this.done) {
      controller.abort(ABORT.client);
      return;
    }
    this.requestStarted = true;
    if (this.requestDoneAt !== undefined) this.armPerTryTimeout();
    if (this.timeouts.perTryIdleMs > 0) this.touchIdle();
    const maxStreamMs = this.cluster.limits.maxStreamMs;
    if (maxStreamMs > 0) this.streamTimer = setTimeout(() => this.maxStreamDurationReached(), maxStreamMs);
  }

  /** The cluster's max_stream_duration: the try is reset (retried as a local reset is). */
  private maxStreamDurationReached(): void {
    this.streamTimer = undefined;
    this.cluster.stats.rqMaxDurationReached.inc();
    this.abort(ABORT.maxStream);
  }

  onResponseStart(controller: UpstreamController, statusCode: number, headers: IncomingHttpHeaders): void {
    const cs = this.cluster.stats;
    cs.response(statusCode, this.tryStarted, { internal: this.req.headers['x-envoy-internal'] === 'true', canary: headers['x-envoy-upstream-canary'] === 'true', retry: this.retried });
    if (headers.connection === 'close') cs.cxCloseNotify.inc();
    if (headers['x-envoy-immediate-health-check-fail'] !== undefined) this.host?.immediateHealthCheckFail();
    (statusCode >= 500 ? this.host?.stats.rqError : this.host?.stats.rqSuccess)?.inc();
    this.host?.outcome(outcomeOfStatus(statusCode));
    if (this.idleTimer) this.touchIdle();
    const decision = this.retryable() ? this.retry!.onHeaders(statusCode, headers) : 'no';
    if (decision === 'yes') {
      this.discarding = true;
      return;
    }
    const record = this.ctx.record;
    if (record) {
      record.upstreamResponded();
      record.responseCodeDetails = 'via_upstream';
      record.responseFlags |= retryRefusalFlag(decision);
    }
    const out = downstreamResponseHeaders(statusCode, headers, this.ctx, this.started);
    if (controller.headersOnly && this.req.httpVersionMajor === 2) setHeadOnly(this.res, statusCode, out);
    else this.res.writeHead(statusCode, out);
  }

  onResponseData(controller: UpstreamController, chunk: Buffer): void {
    if (this.idleTimer) this.touchIdle();
    if (this.discarding) return;
    // The client may hold the listener's per_connection_buffer_limit_bytes unwritten; a chunk past
    // that pauses the upstream until it has been written out (Envoy's flow control).
    if (this.res.writableLength + chunk.length <= this.ctx.bufferLimit) {
      this.res.write(chunk);
      return;
    }
    controller.pause();
    const flow = this.cluster.stats.flow;
    flow.pausedReading.inc();
    this.res.write(chunk, (err) => {
      if (err || this.done) return;
      flow.resumedReading.inc();
      controller.resume();
    });
  }

  onResponseEnd(_controller: UpstreamController, trailers: IncomingHttpHeaders): void {
    this.responseEnded(trailers);
  }

  /** The last piece of the body with the end: written with it (one write, no turn of the loop between). */
  onResponseLastData(controller: UpstreamController, chunk: Buffer, trailers: IncomingHttpHeaders): void {
    if (this.discarding || this.res.writableLength + chunk.length > this.ctx.bufferLimit) {
      this.onResponseData(controller, chunk);
      this.responseEnded(trailers);
      return;
    }
    this.responseEnded(trailers, chunk);
  }

  /** The try's response is over: retried if it was being discarded, else the client's response ends (with `last`, its last piece). */
  private responseEnded(trailers: IncomingHttpHeaders, last?: Buffer): void {
    this.endTry();
    if (this.discarding) {
      this.scheduleRetry();
      return;
    }
    this.finish();
    if (trailers && hasAny(trailers)) this.sendTrailers(trailers);
    if (last) this.res.end(last);
    else this.res.end();
  }

  /**
   * The upstream's trailers (a gRPC status): through the filters (gRPC-Web makes a body frame of
   * them), then to an HTTP/2 client. Envoy's HTTP/1 codec drops proxied trailers unless
   * `enable_trailers`; so does this (and Node sends them only on a chunked response).
   */
  private sendTrailers(trailers: IncomingHttpHeaders): void {
    const out: MutableHeaders = {};
    for (const k in trailers) if (k.charCodeAt(0) !== 58 /* ':' */ && trailers[k] !== undefined) out[k] = trailers[k]!;
    this.ctx.encodeTrailers?.(out);
    if ((this.req.httpVersionMajor === 2 || this.ctx.http1Trailers) && hasAny(out)) this.res.addTrailers(out as Record<string, string>);
  }

  /**
   * A timeout or the client leaving ends the current try, whether it is under way, waiting in
   * our pool for a connection, or waiting for its new connection to connect (which is not
   * interrupted: the exchange answers now, and the request is aborted when it starts, before a
   * byte of it is written, see onRequestStart). A per-try timeout still waits for the connect in that last case, since
   * a retry must not overlap a try that may yet start.
   */
  private abort(reason: Error): void {
    if (this.backoffTimer) {
      // Between two tries: nothing is in flight upstream; the exchange ends as that try's failure would.
      clearTimeout(this.backoffTimer);
      this.backoffTimer = undefined;
      this.tryFailed(reason, true);
      return;
    }
    const cs = this.cluster.stats;
    // Envoy's upstream_rq_cancelled: the client left before the request had a connection; tx_reset: a request under way that this side reset.
    if (reason === ABORT.client && this.pendingHeld) cs.rqCancelled.inc();
    else if (this.controller) {
      cs.rqTxReset.inc();
      // An HTTP/1 connection cannot carry on after a request it abandoned: this side closes it.
      if (!this.cluster.http2) {
        cs.cxDestroyLocalWithActiveRq.inc();
        cs.cxDestroyWithActiveRq.inc();
      }
    }
    if (this.controller) this.controller.abort(reason);
    else if (this.pool?.cancel(this)) this.tryFailed(reason);
    else if (this.host && reason !== ABORT.perTry && reason !== ABORT.perTryIdle) this.tryFailed(reason);
  }

  onResponseError(_controller: UpstreamController, err: Error): void {
    this.tryFailed(err);
  }

  /** `betweenTries`: the route's timeout (or the client) came during a retry's back-off, with no try under way. */
  private tryFailed(err: Error & { refused?: boolean; streamOnly?: boolean }, betweenTries = false): void {
    this.endTry();
    if (this.done) return; // a try answered for already (aborted once it started)
    const failure = classify(err);
    if (failure === 'client') {
      this.finish();
      return;
    }
    log.debug(`cluster '${this.cluster.name}' host ${this.lastHost?.address}: ${failure} (${err.message})`);
    const cs = this.cluster.stats;
    // Local failures count as gateway failures for outlier detection (Envoy without split_external_local_origin_errors).
    if (failure !== 'max_stream_duration') this.lastHost?.outcome('G');
    // A try that failed on a host it reached for counts as that host's error (Envoy's router, retried or not).
    if (failure !== 'max_stream_duration') this.lastHost?.stats.rqError.inc();
    if (failure === 'connect') {
      // The request waited for a connection that failed: Envoy's pool fails its pending requests so (the connection's failure is the host's, counted once).
      cs.rqPendingFailureEject.inc();
    }
    else if (failure === 'timeout') {
      // As Envoy's onResponseTimeout: counted for a try awaiting its response, none between tries.
      if (!betweenTries) cs.rqTimeout.inc();
      this.lastHost?.stats.rqTimeout.inc();
    }
    else if (failure === 'per_try_timeout') {
      cs.rqPerTryTimeout.inc();
      this.lastHost?.stats.rqTimeout.inc();
    } else if (failure === 'max_stream_duration' || failure === 'per_try_idle_timeout') {
      // counted when it fired (upstream_rq_max_duration_reached, upstream_rq_per_try_idle_timeout)
    } else if ((err as { noError?: boolean }).noError) {
      // An HTTP/2 stream the upstream reset with NO_ERROR: its connection carries on.
      cs.rqRxResetNoError.inc();
    } else {
      cs.rqRxReset.inc();
      // An HTTP/2 stream reset alone leaves its connection up: no connection was destroyed, none failed its protocol.
      if (!(err as { streamOnly?: boolean }).streamOnly) {
        cs.cxDestroyRemoteWithActiveRq.inc();
        cs.cxDestroyWithActiveRq.inc();
        // The upstream's bytes were not HTTP (llhttp: HTTPParserError; node:http2: a protocol error).
        if (err.name === 'HTTPParserError' || /^(HPE_|ERR_HTTP2_(ERROR|INVALID|STREAM_ERROR|SESSION_ERROR))/.test((err as NodeJS.ErrnoException).code ?? '')) cs.cxProtocolError.inc();
      }
    }
    const record = this.ctx.record;
    if (this.res.headersSent) {
      // Mid-body: the client sees the stream cut short, as Envoy resets it.
      this.ctx.stats.rqResetAfterResponseStarted.inc();
      this.ctx.stats.rqTxReset.inc();
      if (record && failure === 'max_stream_duration') {
        record.responseFlags |= FAILURE_LOG.max_stream_duration.flag;
        record.responseCodeDetails = FAILURE_LOG.max_stream_duration.details;
      } else if (record) {
        record.responseFlags |= ResponseFlag.upstreamRemoteReset;
        record.responseCodeDetails = 'upstream_reset_after_response_started{remote_reset}';
      }
      this.finish();
      this.res.destroy();
      return;
    }
    // The route's timeout is never retried; a try that failed otherwise may be, as a reset of its kind.
    const decision = failure !== 'timeout' && !betweenTries && this.retryable() ? this.retry!.onReset(resetReason(failure, err), this.requestStarted) : 'no';
    if (decision === 'yes') {
      this.scheduleRetry();
      return;
    }
    const connect = failure === 'connect' ? connectLog(err) : undefined;
    const outcome = failure === 'reset' ? resetLog(err) : (connect ?? FAILURE_LOG[failure]);
    if (record) {
      // Only the outcome is logged: a failed try that a retry made good leaves no flag.
      record.responseFlags |= outcome.flag | retryRefusalFlag(decision);
      record.responseCodeDetails = outcome.details;
      if (connect) record.upstreamTransportFailureReason = connect.transport;
    }
    const reply = this.failureReply(failure, err);
    // Envoy charges no code when a stream's max duration ends it, nor for a route timeout that came between two tries.
    if (failure !== 'max_stream_duration' && !betweenTries) this.chargeLocalReply(reply.status);
    this.localReply(reply);
  }

  /**
   * The local reply for a try's failure, as Envoy words each: a reset's names its reason (after
   * retries, "retried and the latest reset reason"); a timeout is 504, or 204 when the request
   * asked so (x-envoy-upstream-rq-timeout-alt-response).
   */
  private failureReply(failure: Exclude<Failure, 'client'>, err: Error & { refused?: boolean; streamOnly?: boolean }): { status: number; body: string } {
    switch (failure) {
      case 'timeout':
      case 'per_try_timeout':
      case 'per_try_idle_timeout':
        return this.timeouts.altResponse ? { status: 204, body: '' } : LocalReply.upstreamTimeout;
      case 'max_stream_duration':
        return this.req.complete ? LocalReply.upstreamMaxStreamDuration : LocalReply.upstreamMaxStreamDurationIncomplete;
      default: {
        const reason = failure === 'connect' ? connectLog(err).reason : resetLog(err).reason;
        return { status: 503, body: `upstream connect error or disconnect/reset before headers. ${this.retried ? 'retried and the latest ' : ''}reset reason: ${reason}` };
      }
    }
  }

  /** Whether this request can be retried at all: it has a retry state, and its body can be sent again (a streamed body cannot). */
  private retryable(): boolean {
    return this.retry !== undefined && !(this.body instanceof Readable);
  }

  private releasePending(): void {
    if (!this.pendingHeld) return;
    this.pendingHeld = false;
    this.cluster.stats.rqPendingActive.dec();
    this.breaker.release('pending');
  }

  /** The breaker refused (its overflow counted): 503 with Envoy's overflow reply (UO). */
  private overflow(): void {
    const record = this.ctx.record;
    if (record) {
      record.responseFlags |= ResponseFlag.upstreamOverflow;
      record.responseCodeDetails = 'upstream_reset_before_response_started{overflow}';
    }
    this.chargeLocalReply(LocalReply.overflow.status);
    this.localReply(LocalReply.overflow);
  }

  /**
   * The next try, after the retry state's back-off (see RetryState.nextBackoffMs). A timeout or
   * the client leaving meanwhile ends the exchange (see abort()).
   */
  private scheduleRetry(): void {
    this.retried = true;
    const delay = this.retry!.nextBackoffMs();
    this.backoffTimer = setTimeout(() => {
      this.backoffTimer = undefined;
      this.start();
    }, delay);
  }

  private endTry(): void {
    this.releasePending();
    if (this.perTryTimer) clearTimeout(this.perTryTimer);
    this.perTryTimer = undefined;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.streamTimer) clearTimeout(this.streamTimer);
    this.streamTimer = undefined;
    this.pool = undefined;
    if (this.host) {
      this.host.activeRequests--;
      this.host.stats.rqActive.dec();
    }
    this.lastHost = this.host;
    this.host = undefined;
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.releasePending();
    this.retry?.release();
    if (this.rqHeld) this.breaker.release('rq');
    this.rqHeld = false;
    this.cluster.stats.rqActive.dec();
    removeDeadline(this);
  }

  /** The cluster's code figures for a reply made here (see ClusterStats.localReply). */
  private chargeLocalReply(status: number): void {
    this.cluster.stats.localReply(status, this.req.headers['x-envoy-internal'] === 'true');
  }

  private localReply(reply: { status: number; body: string }): void {
    this.finish();
    sendLocalReply(this.res, reply.status, reply.body, this.ctx.reply);
  }
}


const accounting = new WeakMap<CircuitBreaker, RetryAccounting>();

/** What a retry state counts and holds, for one cluster at one priority (its breaker's retry unit, its retry figures). */
function retryAccounting(cluster: Cluster, priority: 0 | 1): RetryAccounting {
  const breaker = cluster.breakers[priority];
  let a = accounting.get(breaker);
  if (a) return a;
  const cs = cluster.stats;
  a = {
    canRetry: () => breaker.hasRoom('retry'),
    acquireRetry: () => breaker.acquire('retry'),
    releaseRetry: () => breaker.release('retry'),
    retry: () => cs.rqRetry.inc(),
    success: () => cs.rqRetrySuccess.inc(),
    limitExceeded: () => cs.rqRetryLimitExceeded.inc(),
    overflow: () => breaker.overflow.retry.inc(),
    backoffExponential: () => cs.rqRetryBackoffExponential.inc(),
    backoffRatelimited: () => cs.rqRetryBackoffRatelimited.inc(),
  };
  accounting.set(breaker, a);
  return a;
}

/** The cluster the request was routed to; without one (not configured, or removed), the route's cluster_not_found_response_code. */
export function routedCluster(res: DownstreamResponse, action: ForwardAction, ctx: ForwardContext): Cluster | undefined {
  const cluster = ctx.clusterName !== undefined ? ctx.clusters.get(ctx.clusterName) : undefined;
  if (cluster) return cluster;
  ctx.stats.noCluster.inc();
  if (ctx.record) {
    ctx.record.responseFlags |= ResponseFlag.noClusterFound;
    ctx.record.responseCodeDetails = 'cluster_not_found';
  }
  sendLocalReply(res, action.clusterNotFoundStatus, '', ctx.reply);
  return undefined;
}

export async function forward(req: DownstreamRequest, res: DownstreamResponse, action: ForwardAction, ctx: ForwardContext): Promise<void> {
  const cluster = routedCluster(res, action, ctx);
  if (!cluster) return;
  ctx.stats.rqRouted.inc();
  // Envoy's maintenance mode: the runtime's upstream.maintenance_mode.<cluster> percent of requests get an immediate 503.
  if (featureEnabled(cluster.maintenanceModeKey, 0)) {
    cluster.stats.rqMaintenanceMode.inc();
    cluster.stats.localReply(503, req.headers['x-envoy-internal'] === 'true');
    if (ctx.record) {
      ctx.record.responseFlags |= ResponseFlag.upstreamOverflow;
      ctx.record.responseCodeDetails = 'maintenance_mode';
    }
    sendLocalReply(res, 503, 'maintenance mode', ctx.reply);
    return;
  }
  const length = req.headers['content-length'];
  // A filter may have read the body whole already (the buffer filter), or transformed it (a decompressor): it goes as they left it.
  const hasBody = ctx.body !== undefined ? !Buffer.isBuffer(ctx.body) || ctx.body.length > 0 : requestHasBody(req);
  let body: Buffer | Readable | null = ctx.body ?? (hasBody ? req : null);
  // The timeouts, then the retry state, each consuming the request headers it reads (as Envoy's router does, in that order).
  const timeouts = routeTimeouts(action, ctx.headers);
  const view = { method: req.method ?? 'GET', path: ctx.path, authority: ctx.authority, headers: ctx.headers };
  let retry = RetryState.create(action.retry, ctx.headers, view, retryAccounting(cluster, action.priority));
  if (retry && !retry.enabled) retry = undefined;
  if (hasBody && retry && !Buffer.isBuffer(body)) {
    if (body === req && length !== undefined && Number(length) <= RETRY_BUFFER_LIMIT) {
      try {
        body = await readBody(req);
      } catch {
        return; // the client went away while sending its body
      }
    } else {
      // Too long (or of unknown length) to keep for a retry: it streams once, as Envoy abandons the retry.
      retry = undefined;
      cluster.stats.retryOrShadowAbandoned.inc();
    }
  }
  if (body instanceof Readable) followBodyFlow(body, ctx.stats);
  new Exchange(req, res, action, cluster, ctx, body, retry, timeouts).begin();
}

/**
 * The connection manager's downstream_flow_control_paused/resumed_reading_total: the client's
 * body streams upstream, and is paused whenever the upstream connection holds more than it can
 * take (the upstream connection's and pipe()'s back-pressure pause the stream), then resumed once it drains.
 */
function followBodyFlow(body: Readable, stats: HttpStats): void {
  let paused = false;
  body.on('pause', () => {
    if (paused || body.readableEnded) return;
    paused = true;
    stats.flowPausedReading.inc();
  });
  body.on('resume', () => {
    if (!paused) return;
    paused = false;
    stats.flowResumedReading.inc();
  });
}
