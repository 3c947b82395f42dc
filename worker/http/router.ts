import type { IncomingHttpHeaders } from 'node:http';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import { Readable } from 'node:stream';
import { ResponseFlag } from '../../shared/access-log/entry.js';
import type { Cluster, Host } from '../upstream/cluster.js';
import { LocalReply, sendLocalReply } from './local-reply.js';
import { outcomeOfStatus } from '../../shared/upstream/outcomes.js';
import { countRequestOverflow, type CircuitBreaker } from '../upstream/circuit-breaker.js';
import type { Http1Pool } from '../upstream/http1-pool.js';
import type { ForwardAction } from '../../shared/http/route-table.js';
import type { RetryState } from './retry-state.js';
import { ABORT, classify, countTryFailure, failureReply, logTryFailure, recordFailure, resetAfterResponseStarted, resetReason, retryRefusalFlag } from './upstream-failures.js';
import { expectedTimeoutMs, type RouteTimeouts } from './route-timeouts.js';
import type { UpstreamController, UpstreamHandler } from '../upstream/upstream-handler.js';
import { upstreamHeaders } from './upstream-headers.js';
import { downstreamResponseHeaders, hasAny, sendTrailers, setHeadOnly, type ForwardContext } from './forward-context.js';
import { TryFigures } from './try-figures.js';
import { addDeadline, removeDeadline, type DeadlineList, type Deadlined } from '../deadlines.js';
import { streamUpstream } from './stream-accounts.js';
import { logDecodingHeaders, logEncodingHeaders, logPoolReady, logRetry, logUpstreamHeaders } from './stream-log.js';

/**
 * The router filter's exchange with the upstream, once forward.ts has started it: a host of the
 * cluster, the request over the host's keep-alive pool or HTTP/2 connection, the response streamed
 * back, the route's timeouts, and retries as the request's retry state (retry-state.ts) decides
 * them; a try's failure is counted, logged and answered as upstream-failures.ts says.
 *
 * Hot path (measured with `PROFILE=1 npm run bench`): the upstream connection calls this class
 * back (upstream-handler.ts), so a request costs one object and its timers, with no AbortController,
 * no Readable for the response body and no stream pipeline; headers go to writeHead as a flat
 * array, which Node writes without building a header map.
 */


/** One downstream request on its way upstream: the dispatch handler for each of its tries. */
export class Exchange implements UpstreamHandler, Deadlined {
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
  /** track_cluster_stats' figures, for a cluster that keeps them; auto_sni's server name, for one that names it. */
  private readonly figures: TryFigures | undefined;
  private readonly sni: string | undefined;
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
    // x-envoy-expected-rq-timeout-ms: the per-try timeout if there is one, else the whole one (none with suppress_envoy_headers).
    const expectedMs = ctx.suppressEnvoyHeaders ? 0 : timeouts.perTryMs || timeouts.globalMs;
    this.headers = upstreamHeaders(ctx.headers, ctx.authority, expectedMs);
    this.expectedAt = expectedMs ? this.headers.length - 1 : -1;
    this.figures = cluster.optionalStats ? new TryFigures(cluster.optionalStats, timeouts, body) : undefined;
    this.sni = cluster.serverNaming ? cluster.serverNameFor(ctx.authority, ctx.headers) : undefined;
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
    this.figures?.completed(performance.now() - (this.requestDoneAt ?? this.started));
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
    logDecodingHeaders(this.req, this.req.method ?? 'GET', this.ctx.path, this.scheme(), this.headers);
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
    if (this.retried && this.expectedAt >= 0) this.headers[this.expectedAt] = String(expectedTimeoutMs(this.timeouts, this.requestDoneAt ?? this.started));
    host.activeRequests++;
    host.stats.rqTotal.inc();
    host.stats.rqActive.inc();
    this.cluster.stats.rqTotal.inc();
    this.tryStarted = performance.now();
    this.figures?.tryStarted(this.tryStarted);
    this.discarding = false;
    this.controller = undefined;
    if (this.cluster.http2 || host.negotiatedH2) {
      host.h2Connection(this.action.priority, this.sni, this.req).request(this.req.method ?? 'GET', this.scheme(), this.ctx.path, this.headers, this.body, this);
      return;
    }
    this.pool = host.connectionPool(this.action.priority, this.sni, this.req);
    this.pool.dispatch({ path: this.ctx.path, method: this.req.method ?? 'GET', headers: this.headers, body: this.body }, this);
  }

  /**
   * The :scheme an HTTP/2 upstream gets: the request's (an HTTP/2 client's, scheme_to_overwrite's,
   * else the client connection's transport), or with match_upstream the upstream connection's.
   */
  private scheme(): string {
    if (this.ctx.schemeMatchesUpstream) return (this.host ?? this.lastHost)?.tls ? 'https' : 'http';
    const given = this.ctx.headers[':scheme'];
    if (typeof given === 'string') return given;
    return (this.req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
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
    streamUpstream(this.req, controller);
    logPoolReady(this.req);
  }

  /** The cluster's max_stream_duration: the try is reset (retried as a local reset is). */
  private maxStreamDurationReached(): void {
    this.streamTimer = undefined;
    this.cluster.stats.rqMaxDurationReached.inc();
    this.abort(ABORT.maxStream);
  }

  onResponseStart(controller: UpstreamController, statusCode: number, headers: IncomingHttpHeaders): void {
    const cs = this.cluster.stats;
    logUpstreamHeaders(this.req, controller.headersOnly === true);
    this.figures?.responseHeaders(headers, statusCode);
    cs.response(statusCode, this.tryStarted, { internal: this.req.headers['x-envoy-internal'] === 'true', canary: headers['x-envoy-upstream-canary'] === 'true', retry: this.retried });
    if (headers.connection === 'close') cs.cxCloseNotify.inc();
    if (headers['x-envoy-immediate-health-check-fail'] !== undefined) this.host?.immediateHealthCheckFail();
    (statusCode >= 500 ? this.host?.stats.rqError : this.host?.stats.rqSuccess)?.inc();
    this.host?.responded(outcomeOfStatus(statusCode));
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
    logEncodingHeaders(this.req, statusCode, out, controller.headersOnly === true);
    if (controller.headersOnly && this.req.httpVersionMajor === 2) setHeadOnly(this.res, statusCode, out);
    else this.res.writeHead(statusCode, out);
  }

  onResponseData(controller: UpstreamController, chunk: Buffer): void {
    if (this.idleTimer) this.touchIdle();
    this.figures?.responseData(chunk.length);
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
    this.figures?.responseData(chunk.length);
    this.responseEnded(trailers, chunk);
  }

  /** The try's response is over: retried if it was being discarded, else the client's response ends (with `last`, its last piece). */
  private responseEnded(trailers: IncomingHttpHeaders, last?: Buffer): void {
    this.endTry();
    if (this.discarding) {
      this.scheduleRetry();
      return;
    }
    this.figures?.completed(performance.now() - (this.requestDoneAt ?? this.started));
    this.finish();
    if (trailers && hasAny(trailers)) sendTrailers(trailers, this.req.httpVersionMajor === 2, this.res, this.ctx);
    if (last) this.res.end(last);
    else this.res.end();
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
    logTryFailure(this.req, failure, err);
    countTryFailure(failure, err, this.cluster.stats, this.lastHost, betweenTries, this.controller !== undefined);
    const record = this.ctx.record;
    if (this.res.headersSent) {
      resetAfterResponseStarted(failure, this.ctx.stats, record);
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
    if (record) recordFailure(failure, err, record, decision);
    const reply = failureReply(failure, err, { altResponse: this.timeouts.altResponse, requestComplete: this.req.complete, retried: this.retried });
    // Envoy charges no code when a stream's max duration ends it, nor for a route timeout that came between two tries.
    if (failure !== 'max_stream_duration' && !betweenTries) this.chargeLocalReply(reply.status);
    this.localReply(reply);
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

  /** The breaker refused (its overflow counted): 503 with Envoy's overflow reply (UO), and x-envoy-overloaded unless suppress_envoy_headers. */
  private overflow(): void {
    const record = this.ctx.record;
    if (record) {
      record.responseFlags |= ResponseFlag.upstreamOverflow;
      record.responseCodeDetails = 'upstream_reset_before_response_started{overflow}';
    }
    this.chargeLocalReply(LocalReply.overflow.status);
    this.localReply(LocalReply.overflow, this.ctx.suppressEnvoyHeaders ? undefined : { 'x-envoy-overloaded': 'true' });
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
      logRetry(this.req);
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
      this.figures?.tryEnded(performance.now(), { headers: this.headers, method: this.req.method ?? 'GET', path: this.ctx.path, scheme: this.scheme() }, this.body);
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

  private localReply(reply: { status: number; body: string }, headers?: Record<string, string>): void {
    this.finish();
    sendLocalReply(this.res, reply.status, reply.body, headers ? { ...this.ctx.reply, extraHeaders: { ...this.ctx.reply.extraHeaders, ...headers } } : this.ctx.reply);
  }
}
