import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import { Readable } from 'node:stream';
import { ResponseFlag } from '../../shared/access-log/entry.js';
import { featureEnabled } from '../../shared/runtime.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { CircuitBreaker } from '../upstream/circuit-breaker.js';
import type { Cluster } from '../upstream/cluster.js';
import { routedCluster, type ForwardContext } from './forward-context.js';
import { sendLocalReply } from './local-reply.js';
import { readBody, requestHasBody } from './request-body.js';
import { RetryState, type RetryAccounting } from './retry-state.js';
import type { ForwardAction } from '../../shared/http/route-table.js';
import { routeTimeouts } from './route-timeouts.js';
import { Exchange } from './router.js';

/**
 * The router filter's start for a routed request, as Envoy's decodeHeaders: the cluster (or
 * cluster_not_found), maintenance mode, the timeouts and the retry state read from the request's
 * headers, and the body kept for retries (a content-length of up to 64 KiB, as Envoy buffers for
 * retries; a larger or chunked one streams, once). Then the exchange (router.ts) takes it upstream.
 */

const RETRY_BUFFER_LIMIT = 64 * 1024;

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
