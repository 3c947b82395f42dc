import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { percentageOfTimeout, type ClusterOptionalStats } from '../../shared/stats/cluster-optional-stats.js';

/**
 * One exchange's track_cluster_stats figures, as Envoy records them: each try, when it ends
 * (UpstreamRequest::cleanUp), records its share of the per-try timeout and, with
 * request_response_sizes, the request's headers (bytes as Envoy's byteSize counts them, with the
 * pseudo-headers, and their number) and the body bytes sent, and when the try had a response, its
 * headers and the body bytes received; the response that completes the exchange records its share
 * of the route's timeout (Filter::onUpstreamComplete), as does the route's timeout itself.
 * Made only for a cluster that tracks something (the router holds none otherwise).
 */
export class TryFigures {
  private started = 0;
  private rsHeaders: { size: number; count: number } | undefined;
  private rxBytes = 0;
  /** A streamed body's bytes read so far (it goes once: a streamed body is never retried). */
  private streamedBytes = 0;

  constructor(
    private readonly stats: ClusterOptionalStats,
    private readonly timeouts: { perTryMs: number; globalMs: number },
    body: Buffer | Readable | null,
  ) {
    // prependListener does not set the stream flowing: the upstream connection still does, when it sends it.
    if (stats.sizes && body instanceof Readable) body.prependListener('data', (chunk: Buffer) => (this.streamedBytes += chunk.length));
  }

  tryStarted(now: number): void {
    this.started = now;
    this.rsHeaders = undefined;
    this.rxBytes = 0;
  }

  responseHeaders(headers: IncomingHttpHeaders, status: number): void {
    if (!this.stats.sizes) return;
    let size = 7 /* :status */ + String(status).length;
    let count = 1;
    for (const k in headers) {
      const v = headers[k];
      if (v === undefined) continue;
      for (const item of Array.isArray(v) ? v : [v]) {
        size += k.length + item.length;
        count++;
      }
    }
    this.rsHeaders = { size, count };
  }

  responseData(bytes: number): void {
    this.rxBytes += bytes;
  }

  /**
   * The try is over. `headers` is the request as it went upstream (a flat name, value list, with
   * `host` for :authority), with its method, path and scheme.
   */
  tryEnded(now: number, request: { headers: readonly string[]; method: string; path: string; scheme: string }, body: Buffer | Readable | null): void {
    this.stats.budgets?.perTry.record(percentageOfTimeout(now - this.started, this.timeouts.perTryMs));
    const sizes = this.stats.sizes;
    if (!sizes) return;
    const h = request.headers;
    // The pseudo-headers Envoy's header map holds: :method, :path, :scheme, and :authority for host.
    let size = 7 + request.method.length + 5 + request.path.length + 7 + request.scheme.length;
    for (let i = 0; i < h.length; i += 2) size += (h[i] === 'host' ? 10 : h[i]!.length) + h[i + 1]!.length;
    sizes.rqHeadersSize.record(size);
    sizes.rqHeadersCount.record(h.length / 2 + 3);
    sizes.rqBodySize.record(body === null ? 0 : Buffer.isBuffer(body) ? body.length : this.streamedBytes);
    if (this.rsHeaders) {
      sizes.rsHeadersSize.record(this.rsHeaders.size);
      sizes.rsHeadersCount.record(this.rsHeaders.count);
      sizes.rsBodySize.record(this.rxBytes);
    }
  }

  /** The exchange's response completed, or the route's timeout fired: `elapsedMs` since the client's request was whole. */
  completed(elapsedMs: number): void {
    this.stats.budgets?.global.record(percentageOfTimeout(elapsedMs, this.timeouts.globalMs));
  }
}
