import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Dispatcher } from 'undici';
import { getLogger } from '../../shared/log/logger.js';
import type { Cluster, ClusterManager, Host } from '../upstream/cluster.js';
import { LocalReply, sendLocalReply } from './local-reply.js';
import type { ForwardAction, RetryPolicy } from './route-table.js';

/**
 * The router filter: picks the cluster (weighted if asked) and a host, forwards the request
 * over the host's keep-alive pool, and streams the response back. Retries follow the route's
 * retry_policy (5xx, gateway-error, connect-failure, reset, retriable-status-codes) and need a
 * replayable body: a request body with a content-length of up to 64 KiB is buffered when a
 * retry policy exists (as Envoy buffers for retries); a larger or chunked one streams, once.
 */

const log = getLogger('router', import.meta.url);

/** Hop-by-hop headers are the connection's own, never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'http2-settings']);
const RETRY_BUFFER_LIMIT = 64 * 1024;

export interface ForwardContext {
  clusters: ClusterManager;
  serverName: string;
  /** The request headers as they go upstream (x-forwarded-for, x-request-id … already set). */
  headers: IncomingHttpHeaders;
  /** The path after any prefix rewrite. */
  path: string;
  authority: string;
}

type Failure = 'connect' | 'reset' | 'timeout' | 'per_try_timeout';

function classify(err: unknown): Failure {
  const code = (err as { code?: string }).code ?? '';
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EADDRNOTAVAIL') return 'connect';
  return 'reset';
}

function pickCluster(action: ForwardAction, clusters: ClusterManager): Cluster | undefined {
  if (action.cluster) return clusters.get(action.cluster);
  const weighted = action.weightedClusters ?? [];
  let r = Math.random() * action.totalWeight;
  for (const c of weighted) {
    r -= c.weight;
    if (r < 0) return clusters.get(c.name);
  }
  return weighted.length ? clusters.get(weighted[weighted.length - 1]!.name) : undefined;
}

function upstreamHeaders(headers: IncomingHttpHeaders, authority: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const connectionTokens = String(headers.connection ?? '').toLowerCase().split(',').map((t) => t.trim());
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || connectionTokens.includes(k) || k.startsWith(':')) continue;
    out[k] = v;
  }
  out.host = authority;
  return out;
}

function responseHeaders(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function shouldRetryStatus(policy: RetryPolicy | undefined, status: number): boolean {
  if (!policy) return false;
  if (policy.on5xx && status >= 500) return true;
  if (policy.onGatewayError && (status === 502 || status === 503 || status === 504)) return true;
  return policy.onRetriableStatusCodes.has(status);
}

function shouldRetryFailure(policy: RetryPolicy | undefined, failure: Failure): boolean {
  if (!policy) return false;
  if (failure === 'connect') return policy.onConnectFailure;
  if (failure === 'per_try_timeout') return policy.on5xx || policy.onGatewayError || policy.onReset;
  if (failure === 'reset') return policy.onReset;
  return false;
}

export async function forward(req: IncomingMessage, res: ServerResponse, action: ForwardAction, ctx: ForwardContext): Promise<void> {
  const reply = { serverName: ctx.serverName };
  const cluster = pickCluster(action, ctx.clusters);
  if (!cluster) {
    sendLocalReply(res, LocalReply.clusterNotFound.status, LocalReply.clusterNotFound.body, reply);
    return;
  }
  const started = performance.now();
  const headers = upstreamHeaders(ctx.headers, ctx.authority);
  if (action.timeoutMs > 0) headers['x-envoy-expected-rq-timeout-ms'] = String(action.timeoutMs);

  const length = req.headers['content-length'];
  const hasBody = length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
  let body: Buffer | IncomingMessage | null = hasBody ? req : null;
  let retriesLeft = action.retry?.numRetries ?? 0;
  if (hasBody && retriesLeft > 0) {
    if (length !== undefined && Number(length) <= RETRY_BUFFER_LIMIT) {
      try {
        body = await readBody(req);
      } catch {
        return; // the client went away while sending its body
      }
    } else {
      retriesLeft = 0;
    }
  }

  // The whole request (all tries) must complete within the route timeout.
  const overall = new AbortController();
  const overallTimer = action.timeoutMs > 0 ? setTimeout(() => overall.abort('timeout'), action.timeoutMs) : undefined;
  const onClientGone = () => overall.abort('client');
  res.on('close', onClientGone);

  try {
    for (;;) {
      const host: Host | undefined = cluster.pickHost();
      if (!host) {
        sendLocalReply(res, LocalReply.noHealthyUpstream.status, LocalReply.noHealthyUpstream.body, reply);
        return;
      }
      const attempt = new AbortController();
      const onOverall = () => attempt.abort(overall.signal.reason);
      overall.signal.addEventListener('abort', onOverall);
      const perTry = action.retry?.perTryTimeoutMs ? setTimeout(() => attempt.abort('per_try_timeout'), action.retry.perTryTimeoutMs) : undefined;
      host.activeRequests++;
      let response: Dispatcher.ResponseData | undefined;
      let failure: Failure | undefined;
      try {
        response = await host.connectionPool().request({
          path: ctx.path,
          method: req.method as Dispatcher.HttpMethod,
          headers,
          body,
          signal: attempt.signal,
        });
      } catch (err) {
        const reason = attempt.signal.reason;
        failure = reason === 'per_try_timeout' ? 'per_try_timeout' : reason === 'timeout' ? 'timeout' : classify(err);
        if (reason === 'client') return;
        log.debug(`cluster '${cluster.name}' host ${host.address}: ${failure} (${(err as Error).message})`);
      } finally {
        if (perTry) clearTimeout(perTry);
        overall.signal.removeEventListener('abort', onOverall);
      }

      if (response) {
        if (retriesLeft > 0 && shouldRetryStatus(action.retry, response.statusCode)) {
          retriesLeft--;
          host.activeRequests--;
          await response.body.dump().catch(() => undefined);
          continue;
        }
        const out = responseHeaders(response.headers);
        out.server = ctx.serverName;
        out['x-envoy-upstream-service-time'] = String(Math.round(performance.now() - started));
        res.writeHead(response.statusCode, out);
        try {
          await pipeline(response.body, res);
        } catch {
          // the client or the upstream went away mid-body; both sides are closed by pipeline
        } finally {
          host.activeRequests--;
        }
        return;
      }

      host.activeRequests--;
      if (failure === 'timeout') {
        sendLocalReply(res, LocalReply.upstreamTimeout.status, LocalReply.upstreamTimeout.body, reply);
        return;
      }
      if (retriesLeft > 0 && shouldRetryFailure(action.retry, failure!)) {
        retriesLeft--;
        continue;
      }
      const local = failure === 'connect' ? LocalReply.connectFailure : failure === 'per_try_timeout' ? LocalReply.upstreamTimeout : LocalReply.connectionTermination;
      sendLocalReply(res, local.status, local.body, reply);
      return;
    }
  } finally {
    if (overallTimer) clearTimeout(overallTimer);
    res.off('close', onClientGone);
  }
}
