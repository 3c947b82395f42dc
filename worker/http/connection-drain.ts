import type { Http2Session } from 'node:http2';
import type { DrainOrder } from '../../shared/ipc.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { Http1Server } from '../http1/server.js';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import { drainHttp2Session } from './http2-drain.js';
import type { Tunnel } from './upgrade-router.js';

/**
 * One connection manager's part in a drain, as Envoy's connection manager drains: responses
 * close their connections (drain_close), HTTP/1 keep-alive is shortened to the drain's end, and
 * upgraded streams (tunnels) are ended at its deadline or when the manager closes.
 */
export class ConnectionDrain {
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private tunnelDeadline: NodeJS.Timeout | undefined;
  private tunnelsEnded = false;
  /** Upgraded streams joined to their upstream, for the drain's end. */
  private readonly tunnels = new Set<Tunnel>();

  constructor(
    private readonly stats: HttpStats,
    /** drain_timeout: the grace between an HTTP/2 shutdown notice and the final GOAWAY. */
    private readonly drainTimeoutMs: number,
    private readonly http1: () => Http1Server | undefined,
  ) {}

  /** The drain has begun: keep-alive shortened, tunnels ended at its deadline. */
  started(order: DrainOrder, idleMs: number): void {
    this.shortenKeepAlive(order, idleMs);
    this.endTunnelsAt(order);
  }

  /** An upgraded stream joined its upstream: it ends with the drain (at once, if joined after the deadline). */
  joined(tunnel: Tunnel): void {
    this.tunnels.add(tunnel);
    if (this.tunnelsEnded) queueMicrotask(() => tunnel.close());
  }

  left(tunnel: Tunnel): void {
    this.tunnels.delete(tunnel);
  }

  /** Draining: HTTP/1 gets `Connection: close` on this response; an HTTP/2 session gets GOAWAY once. */
  closeAfterResponse(req: DownstreamRequest, res: DownstreamResponse): void {
    if (req.httpVersionMajor === 2) {
      const session = (req as unknown as { stream?: { session?: Http2Session } }).stream?.session;
      if (!session || session.closed) return;
      this.stats.cxDrainClose.inc();
      drainHttp2Session(session, this.drainTimeoutMs); // GOAWAY: streams in flight finish, new ones go elsewhere
      return;
    }
    if (res.shouldKeepAlive) {
      this.stats.cxDrainClose.inc();
      res.shouldKeepAlive = false;
    }
  }

  /**
   * Draining: tell HTTP/1 clients, on every response that keeps its connection, that the
   * connection lives only until the drain ends (`Keep-Alive: timeout=` with the seconds left,
   * shrinking each second), and close a connection that stays idle past what it was told. So an
   * idle keep-alive connection is not left until terminate (Envoy #42305), and none is closed
   * under a client that was promised more time (the race behind failed requests on reload).
   */
  private shortenKeepAlive(order: DrainOrder, idleMs: number): void {
    if (this.keepAliveTimer || order.drainTimeMs <= 0) return;
    const deadline = order.startedAt + order.drainTimeMs;
    const update = () => {
      const h1 = this.http1();
      if (!h1) return;
      h1.keepAliveTimeout = Math.min(idleMs, Math.max(1000, deadline - Date.now()));
    };
    update();
    this.keepAliveTimer = setInterval(update, 1000);
    this.keepAliveTimer.unref();
  }

  /**
   * Draining: upgraded streams (WebSockets …) go on until the drain's deadline, then both of each
   * tunnel's sides are ended (FIN, END_STREAM), so a client sees its connection close, not fail.
   */
  private endTunnelsAt(order: DrainOrder): void {
    if (this.tunnelDeadline) return;
    const deadline = order.startedAt + Math.max(0, order.drainTimeMs);
    this.tunnelDeadline = setTimeout(() => {
      this.tunnelsEnded = true;
      for (const tunnel of this.tunnels) tunnel.close();
    }, Math.max(0, deadline - Date.now()));
    this.tunnelDeadline.unref();
  }

  /** The connection manager closes: timers stopped, every tunnel ended. */
  close(): void {
    clearInterval(this.keepAliveTimer);
    clearTimeout(this.tunnelDeadline);
    this.tunnelsEnded = true;
    for (const tunnel of this.tunnels) tunnel.close();
  }
}
