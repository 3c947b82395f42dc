import type { Socket } from 'node:net';
import { ResponseFlag } from '../../shared/access-log/entry.js';
import { UNSUPPORTED_TRANSFER_CODING } from '../http1/common.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import type { HttpExchangeRecord } from './exchange-record.js';
import { LocalReply, sendLocalReply, type LocalReplyContext } from './local-reply.js';
import { hasDuplicateHost } from './request-target.js';
import type { Http2Session } from 'node:http2';
import { overload } from '../overload.js';

/**
 * The checks a request meets before the connection manager handles it, as Envoy's HTTP/1 codec and
 * connection manager make them: too many headers (431), a second Host (400, and the connection
 * closes), a target that is not a path (404), HTTP/1.0 unless accept_http_10 (426, and the
 * connection closes). Each is answered here, counted and recorded as Envoy records it.
 */

export interface RequestChecks {
  maxHeadersCount: number;
  acceptHttp10: boolean;
}

export interface RequestShape {
  http1: boolean;
  http10: boolean;
  connect: boolean;
  path: string;
}

/** A downstream protocol error: counted, recorded with its details, and the connection closes after the reply. */
function protocolError(res: DownstreamResponse, stats: HttpStats, record: HttpExchangeRecord | undefined, details: string): void {
  stats.cxProtocolError.inc();
  if (record) {
    record.responseFlags |= ResponseFlag.downstreamProtocolError;
    record.responseCodeDetails = details;
  }
  res.shouldKeepAlive = false;
}

/** True when the request was refused (and answered). */
export function refused(req: DownstreamRequest, res: DownstreamResponse, shape: RequestShape, checks: RequestChecks, stats: HttpStats, record: HttpExchangeRecord | undefined, reply: LocalReplyContext): boolean {
  if (req.rawHeaders.length / 2 > checks.maxHeadersCount) {
    stats.headersTooLarge.inc();
    sendLocalReply(res, LocalReply.tooManyHeaders.status, LocalReply.tooManyHeaders.body, reply);
    return true;
  }
  if (shape.http1 && hasDuplicateHost(req.rawHeaders)) {
    // RFC 9112 §3.2: more than one Host is a 400, and the connection cannot be trusted further.
    protocolError(res, stats, record, 'http1.duplicate_host');
    sendLocalReply(res, 400, '', reply);
    return true;
  }
  if (!shape.connect && shape.path.charCodeAt(0) !== 47 /* '/' */) {
    // As Envoy's connection manager: a path that is not relative (`OPTIONS *`; Node's parser
    // refuses `GET foo` itself, and an absolute-form target has become relative before) is a 404.
    stats.rqNonRelativePath.inc();
    if (record) record.responseCodeDetails = 'absolute_path_rejected';
    sendLocalReply(res, 404, '', reply);
    return true;
  }
  if (shape.http10 && !checks.acceptHttp10) {
    // As Envoy's HTTP/1 codec: HTTP/1.0 unless accept_http_10 is a protocol error, 426, and the connection closes.
    protocolError(res, stats, record, 'low_version');
    sendLocalReply(res, 426, 'Upgrade Required', reply);
    return true;
  }
  return false;
}

/**
 * A transfer coding other than a lone `chunked` is Envoy's 501 (http1.invalid_transfer_encoding),
 * checked before Content-Length beside Transfer-Encoding (400): the server's own check, or
 * llhttp's refusal of a coding after `chunked`.
 */
function unsupportedTransferCoding(err: NodeJS.ErrnoException & { reason?: string }): boolean {
  return err.code === UNSUPPORTED_TRANSFER_CODING || (err.code === 'HPE_INVALID_TRANSFER_ENCODING' && err.reason === 'Invalid `Transfer-Encoding` header value');
}

/**
 * A request the HTTP/1 codec could not read: malformed (400; 501 for a transfer coding Envoy does
 * not serve), headers over max_request_headers_kb (431), or a request or headers timeout (408,
 * counted as downstream_rq_header_timeout when `headerTimeout` is the configured one). The
 * answer closes the connection.
 */
export function refuseMalformed(err: NodeJS.ErrnoException & { reason?: string; headers?: boolean }, socket: Socket, stats: HttpStats, headerTimeout: boolean): void {
  const [status, reason] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout']
        : unsupportedTransferCoding(err)
          ? [501, 'Not Implemented']
          : [400, 'Bad Request'];
  if (status === 408) (err.headers && headerTimeout ? stats.rqHeaderTimeout : stats.rqTimeout).inc();
  if (status === 400 || status === 501) stats.cxProtocolError.inc();
  if (socket.writable) socket.end(`HTTP/1.1 ${status} ${reason}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  else socket.destroy();
}

/**
 * The overload manager's word on a new request (worker/overload.ts), as Envoy's decodeHeaders
 * takes it: stop_accepting_requests saturated answers 503 "envoy overloaded" (flag OM, counted in
 * downstream_rq_overload_close); disable_http_keepalive closes the connection after the response,
 * for its share of requests (HTTP/2: a GOAWAY), counted in downstream_cx_overload_disable_keepalive.
 * True when answered.
 */
export function refusedByOverload(res: DownstreamResponse, http1: boolean, session: Http2Session | undefined, stats: HttpStats, record: HttpExchangeRecord | undefined, reply: LocalReplyContext): boolean {
  if (overload.stopAcceptingRequests) {
    stats.rqOverloadClose.inc();
    if (record) {
      record.responseFlags |= ResponseFlag.overloadManager;
      record.responseCodeDetails = 'overload';
    }
    sendLocalReply(res, 503, 'envoy overloaded', reply);
    return true;
  }
  if (overload.keepaliveOff > 0 && Math.random() < overload.keepaliveOff && (http1 ? res.shouldKeepAlive : session && !session.closed)) {
    stats.cxOverloadDisableKeepalive.inc();
    if (http1) res.shouldKeepAlive = false;
    else session!.close();
  }
  return false;
}
