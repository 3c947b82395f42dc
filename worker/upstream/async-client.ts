import type { IncomingHttpHeaders } from 'node:http';
import { AsyncRequestError, type AsyncRequest, type AsyncResponse } from '../../shared/upstream/async-request.js';
import type { UpstreamController, UpstreamHandler } from './upstream-handler.js';
import type { Cluster } from './cluster.js';

/**
 * Requests the proxy makes itself to a cluster (an authorization service), on the same
 * connections and load balancing as routed requests, and counted in the cluster's figures as
 * Envoy's async client counts them. The whole response is collected; a request that takes longer
 * than its timeout is cancelled.
 */

const DEFAULT_MAX_BODY = 1 << 20;

export function sendToCluster(cluster: Cluster, rq: AsyncRequest): Promise<AsyncResponse> {
  const host = cluster.pickHost();
  if (!host) {
    cluster.stats.cxNoneHealthy.inc();
    return Promise.reject(new AsyncRequestError(`no healthy host in cluster '${cluster.name}'`, 'no_host'));
  }
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const max = rq.maxBodyBytes ?? DEFAULT_MAX_BODY;
    let controller: UpstreamController | undefined;
    let status = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (err: AsyncRequestError | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      host.activeRequests--;
      host.stats.rqActive.dec();
      cluster.stats.rqActive.dec();
      if (err) {
        if (err.reason === 'timeout') cluster.stats.rqTimeout.inc();
        reject(err);
        return;
      }
      cluster.stats.response(status, started);
      resolve({ status, headers, body: Buffer.concat(chunks, size) });
    };
    const timer = setTimeout(() => {
      const err = new AsyncRequestError(`no response from cluster '${cluster.name}' within ${rq.timeoutMs} ms`, 'timeout');
      controller?.abort(err);
      settle(err);
    }, rq.timeoutMs);
    const handler: UpstreamHandler = {
      onRequestStart: (c) => {
        controller = c;
        if (settled) c.abort(new Error('cancelled'));
      },
      onResponseStart: (_c, statusCode, responseHeaders) => {
        status = statusCode;
        headers = responseHeaders;
      },
      onResponseData: (c, chunk) => {
        size += chunk.length;
        if (size > max) {
          const err = new AsyncRequestError(`the response from cluster '${cluster.name}' is over ${max} bytes`, 'too_large');
          c.abort(err);
          settle(err);
          return;
        }
        chunks.push(chunk);
      },
      onResponseEnd: () => settle(undefined),
      onResponseError: (_c, err) => settle(new AsyncRequestError(`cluster '${cluster.name}': ${err.message}`, 'reset')),
    };
    host.activeRequests++;
    host.stats.rqTotal.inc();
    host.stats.rqActive.inc();
    cluster.stats.rqTotal.inc();
    cluster.stats.rqActive.inc();
    if (cluster.http2 || host.negotiatedH2) host.h2Connection(0).request(rq.method, host.tls ? 'https' : 'http', rq.path, rq.headers, rq.body, handler);
    else host.connectionPool(0).dispatch({ method: rq.method, path: rq.path, headers: rq.headers, body: rq.body }, handler);
  });
}
