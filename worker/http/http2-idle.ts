import type { Http2Session, Http2Stream } from 'node:http2';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { ScaledTimer } from '../../shared/overload/config.js';
import { ScaledTimeout } from '../overload.js';
import { drainHttp2Session } from './http2-drain.js';

/**
 * A downstream HTTP/2 connection's idle timeout (common_http_protocol_options.idle_timeout, 1 h
 * by default), as Envoy's connection manager keeps it: armed while the connection has no stream,
 * from its start and whenever its last stream closes; reached, it counts in
 * `downstream_cx_idle_timeout` and the connection drains (GOAWAY, then the final one
 * `drain_timeout` later). reduce_timeouts' HTTP_DOWNSTREAM_CONNECTION_IDLE (`scaledBy`) shortens it.
 */
export function watchHttp2Idle(session: Http2Session, idleMs: number, drainTimeoutMs: number, stats: HttpStats, scaledBy: ScaledTimer | undefined): void {
  if (idleMs <= 0) return;
  let open = 0;
  let timer: ScaledTimeout | undefined;
  const arm = () => {
    timer = new ScaledTimeout(scaledBy, idleMs, () => {
      timer = undefined;
      if (session.closed || session.destroyed) return;
      stats.cxIdleTimeout.inc();
      drainHttp2Session(session, drainTimeoutMs);
    });
  };
  session.on('stream', (stream: Http2Stream) => {
    open++;
    timer?.stop();
    timer = undefined;
    stream.once('close', () => {
      if (--open === 0 && !session.closed && !session.destroyed) arm();
    });
  });
  session.once('close', () => timer?.stop());
  arm();
}
