import type { Http2Session } from 'node:http2';
import type { Socket } from 'node:net';

/**
 * Node 20's nghttp2 (1.61) aborts the whole process — `nghttp2_session_mem_recv2: Assertion
 * iframe->state == NGHTTP2_IB_IGN_ALL failed` — when a session is destroyed from inside one of
 * its own callbacks and the same read then holds a frame that is a connection error (fixed in
 * nghttp2 by PR #2509, after the version Node 20 bundles). Node itself destroys a session from
 * inside its callbacks: a client's GOAWAY makes it close the session, and the next request then
 * destroys it. So one packet of four frames (SETTINGS, GOAWAY, HEADERS, a PING of the wrong
 * length) took a worker down. Destroying such a session is therefore put off to the next turn
 * of the event loop, after nghttp2 has finished the read and terminated the session itself if
 * the rest called for it; a session whose socket is gone, or not yet connected, is destroyed at
 * once (nghttp2 reads nothing then).
 */
export function destroyOutsideCallbacks(session: Http2Session, socket: () => Socket | undefined): void {
  const destroy = session.destroy;
  let pending = false;
  session.destroy = function (this: Http2Session, ...args: Parameters<Http2Session['destroy']>) {
    if (this.destroyed || pending) return;
    // The connection's own socket (`session.socket` is a stand-in that throws once a closing session has let it go).
    const connection = socket();
    if (connection === undefined || connection.destroyed) {
      destroy.apply(this, args);
      return;
    }
    pending = true;
    setImmediate(() => destroy.apply(this, args));
  } as Http2Session['destroy'];
}
