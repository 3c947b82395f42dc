import type { Http2Session, Http2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { runtimeValue } from '../../shared/runtime.js';
import { stats } from '../../shared/stats/process.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import { followHttp2Stream, http2CodecStats } from '../../shared/stats/codec-stats.js';
import type { http2Tuning } from '../../shared/config/http2-options.js';
import { destroyOutsideCallbacks } from '../http2-deferred-destroy.js';
import type { ConnectionLimits } from './connection-limits.js';
import { logConnectionWindow, logHttp2Stream } from '../http2-log.js';

/**
 * What keeps one downstream HTTP/2 connection from being held or abused, as Envoy's connection
 * manager does, and one thing beyond it that Node needs:
 *
 * - **Premature resets** (CVE-2023-44487, "rapid reset"): a stream the client resets before any
 *   response, within `overload.premature_reset_min_stream_lifetime_seconds` (1; compared in whole
 *   seconds, as Envoy does), is premature. Once `overload.premature_reset_total_stream_count`
 *   (500) streams have closed, the connection is aborted if at least half were premature; before
 *   that, as soon as the premature ones reach half of that count, since the ratio can no longer
 *   recover. Counted in `downstream_rq_too_many_premature_resets`.
 * - **A connection Node stopped reading.** On a protocol error (a frame on the wrong stream, a
 *   frame too large, garbage), nghttp2 sends GOAWAY and then wants neither to read nor to write;
 *   Node stops reading the socket and tells no one, so the connection — and the client's close
 *   of it — is never seen again. Every connection that has been silent for a while is therefore
 *   pinged, as Envoy's `connection_keepalive` would: one that does not answer (a session that can
 *   no longer send, or a peer that is gone) is closed and counted in `http2.keepalive_timeout`.
 *   With `connection_keepalive` configured, every connection is also pinged at its interval, as
 *   Envoy's, and one that does not answer within its timeout is closed the same way.
 */

const IDLE_PROBE_MS = 10_000;
const PROBE_TIMEOUT_MS = 5_000;
const keepaliveTimeouts = stats.counter('http2.keepalive_timeout');

function runtimeNumber(key: string, fallback: number): number {
  const v = Number(runtimeValue(key));
  return runtimeValue(key) !== undefined && Number.isFinite(v) && v >= 0 ? v : fallback;
}

export class Http2SessionGuard {
  private closedStreams = 0;
  private prematureResets = 0;
  private probeTimer: NodeJS.Timeout | undefined;
  private aborted = false;

  private keepaliveTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly session: Http2Session,
    private readonly socket: Socket,
    private readonly stats: HttpStats,
    /** http2_protocol_options.connection_keepalive: a PING every interval (± jitter), answered within the timeout. */
    private readonly keepalive?: { intervalMs: number; timeoutMs: number; jitter: number },
  ) {
    session.setTimeout(IDLE_PROBE_MS, () => this.probe());
    session.once('close', () => {
      clearTimeout(this.probeTimer);
      clearTimeout(this.keepaliveTimer);
    });
    if (keepalive) this.scheduleKeepalive();
  }

  private scheduleKeepalive(): void {
    const k = this.keepalive!;
    this.keepaliveTimer = setTimeout(() => {
      this.probe(k.timeoutMs);
      if (!this.session.destroyed) this.scheduleKeepalive();
    }, k.intervalMs * (1 + (Math.random() * 2 - 1) * k.jitter));
    this.keepaliveTimer.unref();
  }

  /** A stream of this connection closed; `reset` when the client reset it before a response began. */
  streamClosed(reset: boolean, lifetimeMs: number): void {
    this.closedStreams++;
    if (reset) this.stats.rqRxReset.inc();
    const minLifetimeS = runtimeNumber('overload.premature_reset_min_stream_lifetime_seconds', 1);
    if (reset && Math.floor(lifetimeMs / 1000) <= minLifetimeS) this.prematureResets++;
    if (this.prematureResets === 0 || this.aborted) return;
    const limit = runtimeNumber('overload.premature_reset_total_stream_count', 500);
    const tooMany = this.closedStreams < limit ? this.prematureResets * 2 >= limit : this.prematureResets * 2 >= this.closedStreams;
    if (!tooMany) return;
    this.aborted = true;
    this.stats.tooManyPrematureResets.inc();
    this.abort();
  }

  /** Silent for a while (or its keepalive is due): a live session answers a PING; one that cannot (or a gone peer) is let go. */
  private probe(timeoutMs = PROBE_TIMEOUT_MS): void {
    if (this.session.destroyed || this.probeTimer) return;
    try {
      const sent = this.session.ping((err) => {
        if (err) return;
        clearTimeout(this.probeTimer);
        this.probeTimer = undefined;
      });
      if (!sent) return; // pings already outstanding: someone else is asking
    } catch {
      return; // closed or destroyed meanwhile: nothing to probe
    }
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      if (this.session.destroyed) return;
      keepaliveTimeouts.inc();
      this.abort();
    }, timeoutMs);
    this.probeTimer.unref();
  }

  private abort(): void {
    this.session.destroy();
    this.socket.destroy();
  }
}

/**
 * A new HTTP/2 session of a connection manager (on `socket`): its streams counted in the codec's
 * figures, its connection window and limits applied, protocol errors and connections counted,
 * and its guard.
 */
export function guardHttp2Session(session: Http2Session, socket: Socket, httpStats: HttpStats, tuning: ReturnType<typeof http2Tuning>, limits: ConnectionLimits | undefined): Http2SessionGuard {
  const codec = http2CodecStats();
  session.on('stream', (stream: Http2Stream) => {
    followHttp2Stream(codec, stream, 'by peer');
    logHttp2Stream(stream, 'by peer');
  });
  destroyOutsideCallbacks(session, () => socket);
  limits?.http2Session(socket, session);
  if (tuning.connectionWindow !== undefined) {
    session.setLocalWindowSize(tuning.connectionWindow);
    logConnectionWindow(session, tuning.connectionWindow);
  }
  const guard = new Http2SessionGuard(session, socket, httpStats, tuning.keepalive);
  // nghttp2 found the peer breaking the protocol (Node then destroys the session).
  session.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code?.startsWith('ERR_HTTP2')) httpStats.cxProtocolError.inc();
  });
  httpStats.cxHttp2Total.inc();
  httpStats.cxHttp2Active.inc();
  session.once('close', () => httpStats.cxHttp2Active.dec());
  return guard;
}
