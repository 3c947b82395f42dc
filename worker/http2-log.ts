import type { Http2Session, Http2Stream } from 'node:http2';
import { connectionTag } from '../shared/log/log-tags.js';
import { Level } from '../shared/log/levels.js';
import { getLogger } from '../shared/log/logger.js';

/**
 * An HTTP/2 session's part of the debug log, in the words of Envoy's HTTP/2 codec and under its
 * logger (`http2`), for downstream and upstream sessions alike: the connection window it sets, each
 * stream's headers complete and its close with the stream's error code, and each GOAWAY it sends.
 * Each function tests the level first; a stream is followed only while the level is on.
 */

const log = getLogger('http2', import.meta.url);

/** The connection's socket, however the session holds it (a closing session's stand-in throws). */
function socketOf(session: Http2Session): object | undefined {
  try {
    return session.socket;
  } catch {
    return undefined;
  }
}

/** The session sets its connection-level receive window (initial_connection_window_size) past the protocol's 65,535 bytes. */
export function logConnectionWindow(session: Http2Session, size: number): void {
  if (size !== 65_535 && log.enabled(Level.debug)) log.debug(`${connectionTag(socketOf(session))}updating connection-level initial window size to ${size}`);
}

/** A stream: its headers complete (a request's as it opens, a response's as it arrives), then its close. */
export function logHttp2Stream(stream: Http2Stream, opened: 'here' | 'by peer'): void {
  if (!log.enabled(Level.debug)) return;
  const tag = connectionTag(socketOf(stream.session as Http2Session));
  const headers = () => log.debug(`${tag}Http2Visitor::OnEndHeadersForStream(${stream.id ?? 0})`);
  if (opened === 'by peer') headers();
  else stream.once('response', headers);
  stream.once('close', () => log.debug(`${tag}stream ${stream.id ?? 0} closed: ${stream.rstCode ?? 0}`));
}

export function logGoawaySent(session: Http2Session, code = 0): void {
  if (log.enabled(Level.debug)) log.debug(`${connectionTag(socketOf(session))}sent goaway code=${code}`);
}
