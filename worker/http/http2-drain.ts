import { constants, type Http2Session } from 'node:http2';

/**
 * Envoy's HTTP/2 drain sequence: a first GOAWAY with the highest stream id (a shutdown notice: the
 * client opens no new streams, and those already racing towards the proxy are still served),
 * then, `drain_timeout` later (5 s by default), the final GOAWAY; streams in flight finish.
 */

const draining = new WeakSet<Http2Session>();
const MAX_STREAM_ID = 2 ** 31 - 1;

export function drainHttp2Session(session: Http2Session, graceMs: number): void {
  if (session.closed || session.destroyed || draining.has(session)) return;
  draining.add(session);
  if (graceMs <= 0) {
    session.close();
    return;
  }
  session.goaway(constants.NGHTTP2_NO_ERROR, MAX_STREAM_ID);
  const timer = setTimeout(() => {
    if (!session.closed && !session.destroyed) session.close();
  }, graceMs);
  timer.unref();
  session.once('close', () => clearTimeout(timer));
}
