import type { Http2Session } from 'node:http2';
import { http2Module } from '../../shared/builtins.js';
import { http2CodecStats } from '../../shared/stats/codec-stats.js';
import { logGoawaySent } from '../http2-log.js';

/**
 * Envoy's HTTP/2 drain sequence: a first GOAWAY with the highest stream id (a shutdown notice: the
 * client opens no new streams, and those already racing towards the proxy are still served),
 * then, `drain_timeout` later (5 s by default), the final GOAWAY; streams in flight finish.
 * Each GOAWAY counts in `http2.goaway_sent` (Node's close() sends one).
 */

const draining = new WeakSet<Http2Session>();
const MAX_STREAM_ID = 2 ** 31 - 1;

export function drainHttp2Session(session: Http2Session, graceMs: number): void {
  if (session.closed || session.destroyed || draining.has(session)) return;
  draining.add(session);
  const sent = http2CodecStats().goawaySent;
  if (graceMs <= 0) {
    session.close();
    sent.inc();
    logGoawaySent(session);
    return;
  }
  session.goaway(http2Module().constants.NGHTTP2_NO_ERROR, MAX_STREAM_ID);
  sent.inc();
  logGoawaySent(session);
  const timer = setTimeout(() => {
    if (session.closed || session.destroyed) return;
    session.close();
    sent.inc();
    logGoawaySent(session);
  }, graceMs);
  timer.unref();
  session.once('close', () => clearTimeout(timer));
}
