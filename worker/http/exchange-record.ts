import { connectionOrigin } from '../../shared/network/connection-origin.js';
import type { OutgoingHttpHeaders } from 'node:http';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import { Http1Request, type RequestObserver } from '../http1/request.js';
import { Http1Response, type ResponseObserver } from '../http1/response.js';
import { addressText, requestedServerName, type AccessLogEntry, type ConnectionAddresses } from '../../shared/access-log/entry.js';
import type { AccessLogs } from '../../shared/access-log/loggers.js';
import type { RequestView } from '../../shared/matchers.js';
import { BodyCapture } from '../../shared/http/body-capture.js';
import type { ClientAddress } from './request-headers.js';

/**
 * What one HTTP exchange did, for its access-log entry and its tap trace: the connection manager
 * creates it (only when the listener logs, or a tap session is on), the router adds the
 * upstream, the response flags and the details, and it is complete when the response closes,
 * finished or not.
 *
 * Byte counts, bodies (for a tap, up to its limits) and the response headers are taken where
 * Node hands them over: the request's `push` (every body chunk, and the end of the body, go
 * through it whoever reads them) and the response's `writeHead` / `write` / `end`. Wrapping
 * this one request's methods keeps the connection manager and the router free of logging code,
 * and costs nothing when neither is on, since then there is no record.
 */

type Header = string | number | string[] | undefined;

function headerText(v: Header): string | undefined {
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v[0] : String(v);
}

export class HttpExchangeRecord implements AccessLogEntry, RequestObserver, ResponseObserver {
  readonly startTime = Date.now();
  readonly protocol: string;
  readonly request: RequestView;
  rewrittenPath?: string;
  responseCode = 0;
  responseCodeDetails?: string;
  responseFlags = 0;
  bytesReceived = 0;
  bytesSent = 0;
  requestDurationMs?: number;
  responseDurationMs?: number;
  durationMs?: number;
  upstreamHost?: string;
  upstreamCluster?: string;
  attemptCount?: number;
  downstreamRemoteAddress?: string;
  readonly downstreamDirectRemoteAddress?: string;
  readonly downstreamLocalAddress?: string;
  readonly requestedServerName?: string;
  upstreamTransportFailureReason?: string;
  routeName?: string;
  filterChainName?: string;
  localReplyBody?: string;
  healthCheck = false;
  dynamicMetadata?: Record<string, Record<string, unknown>>;
  /** The bodies, when a tap asked for them (see captureBodies). */
  requestBody: BodyCapture | undefined;
  responseBody: BodyCapture | undefined;
  /** The response headers as written: a flat [name, value, …] array or an object. */
  private responseHeaders: readonly unknown[] | OutgoingHttpHeaders | undefined;

  /** `started`: when the connection manager took the request (performance.now()), which durations count from. */
  constructor(req: DownstreamRequest, res: DownstreamResponse, request: RequestView, private readonly started: number) {
    this.request = request;
    this.protocol = req.httpVersionMajor === 2 ? 'HTTP/2' : `HTTP/${req.httpVersion}`;
    const addresses = socketAddresses(req.socket);
    this.downstreamRemoteAddress = addresses.remote;
    this.downstreamDirectRemoteAddress = addresses.direct;
    this.downstreamLocalAddress = addresses.local;
    this.requestedServerName = addresses.serverName;

    // HTTP/1.1's request and response tell the record themselves; others' methods are wrapped.
    if (req instanceof Http1Request) req.observer = this;
    else {
      const push = req.push;
      req.push = (chunk: Buffer | null, encoding?: BufferEncoding) => {
        if (chunk === null) this.receivedAll();
        else this.received(chunk);
        return push.call(req, chunk, encoding);
      };
    }
    // A request without a body may be complete before it reaches here.
    if (req.complete) this.requestDurationMs = this.elapsed();

    if (res instanceof Http1Response) {
      res.observer = this;
      return;
    }
    const writeHead = res.writeHead;
    res.writeHead = ((status: number, ...rest: unknown[]) => {
      const headers = rest[rest.length - 1];
      if (headers !== null && typeof headers === 'object') this.headersGiven(headers);
      return (writeHead as (...a: unknown[]) => DownstreamResponse).call(res, status, ...rest);
    }) as typeof res.writeHead;
    const write = res.write;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      this.sending(chunk);
      return (write as (...a: unknown[]) => boolean).call(res, chunk, ...rest);
    }) as typeof res.write;
    const end = res.end;
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (typeof chunk !== 'function') this.ending(chunk);
      return (end as (...a: unknown[]) => DownstreamResponse).call(res, chunk, ...rest);
    }) as typeof res.end;
  }

  /** A piece of the request's body (RequestObserver). */
  received(chunk: Buffer): void {
    this.bytesReceived += chunk.length;
    this.requestBody?.add(chunk);
  }

  /** The request's body ended (RequestObserver). */
  receivedAll(): void {
    this.requestDurationMs ??= this.elapsed();
  }

  /** The response's headers, as writeHead was given them (ResponseObserver). */
  headersGiven(headers: unknown): void {
    if (headers !== null && typeof headers === 'object') this.responseHeaders = headers as OutgoingHttpHeaders;
  }

  /** A piece of the response's body (ResponseObserver). */
  sending(chunk: unknown): void {
    this.countSent(chunk);
  }

  /** The response's last call, with or without a piece (ResponseObserver). */
  ending(chunk: unknown): void {
    this.countSent(chunk);
    // Nothing came from upstream: this body is the proxy's own (a local reply or a direct response).
    if (this.responseDurationMs === undefined && chunk != null) this.localReplyBody = String(chunk);
  }

  private elapsed(): number {
    return Math.floor(performance.now() - this.started);
  }

  private countSent(chunk: unknown): void {
    if (typeof chunk === 'string') this.bytesSent += Buffer.byteLength(chunk);
    else if (chunk instanceof Uint8Array) this.bytesSent += chunk.length;
    else return;
    this.responseBody?.add(chunk);
  }

  /** The client's address the connection manager found: %DOWNSTREAM_REMOTE_ADDRESS% (the DIRECT one stays the peer's). */
  setClient(client: ClientAddress): void {
    if (client.ip !== undefined) this.downstreamRemoteAddress = addressText(client.ip, client.port);
  }

  /** Keep up to these many bytes of each body (a tap's max_buffered_rx_bytes / max_buffered_tx_bytes). */
  captureBodies(maxRequestBytes: number, maxResponseBytes: number): void {
    this.requestBody = new BodyCapture(maxRequestBytes);
    this.responseBody = new BodyCapture(maxResponseBytes);
  }

  /** The response headers as sent, lower-case names, `:status` first. */
  responseHeaderList(status: number): [string, string][] {
    const out: [string, string][] = [[':status', String(status)]];
    const h = this.responseHeaders;
    if (Array.isArray(h)) {
      for (let i = 0; i < h.length; i += 2) out.push([String(h[i]).toLowerCase(), String(h[i + 1])]);
    } else if (h) {
      for (const [k, v] of Object.entries(h as OutgoingHttpHeaders)) {
        if (v === undefined) continue;
        for (const item of Array.isArray(v) ? v : [v]) out.push([k.toLowerCase(), String(item)]);
      }
    }
    return out;
  }

  /** The router saw the first byte of the upstream response. */
  upstreamResponded(): void {
    this.responseDurationMs = this.elapsed();
  }

  responseHeader(name: string): string | undefined {
    const h = this.responseHeaders;
    if (h === undefined) return undefined;
    // Only a name of the same length is lower-cased to compare (%RESP(...)% looks up every response).
    if (Array.isArray(h)) {
      for (let i = 0; i < h.length; i += 2) {
        const k = String(h[i]);
        if (k.length === name.length && k.toLowerCase() === name) return String(h[i + 1]);
      }
      return undefined;
    }
    const o = h as OutgoingHttpHeaders;
    for (const k in o) if (k.length === name.length && k.toLowerCase() === name) return headerText(o[k]);
    return undefined;
  }

  /** An HTTP/1.1 upgrade answered on the connection itself (101), not through the response object. */
  private upgradeStatus: number | undefined;

  upgradedWith(status: number, headers: readonly string[]): void {
    this.upgradeStatus = status;
    this.responseHeaders = headers;
  }

  /** The response closed (finished, or cut by either side): complete the record, and log it. */
  finish(res: DownstreamResponse, logs: AccessLogs | undefined): void {
    this.durationMs = this.elapsed();
    this.responseCode = this.upgradeStatus ?? (res.headersSent ? res.statusCode : 0);
    logs?.log(this);
  }
}

/**
 * What a request's header formats see when no exchange is recorded (no access log, tap or
 * local_reply_config): the request, its addresses and protocol, nothing of a response yet.
 */
export function requestEntry(req: DownstreamRequest, request: RequestView, client: ClientAddress): AccessLogEntry {
  const addresses = socketAddresses(req.socket);
  return {
    startTime: Date.now(),
    protocol: req.httpVersionMajor === 2 ? 'HTTP/2' : `HTTP/${req.httpVersion}`,
    request,
    responseHeader: () => undefined,
    responseCode: 0,
    responseFlags: 0,
    bytesReceived: 0,
    bytesSent: 0,
    downstreamRemoteAddress: client.ip !== undefined ? addressText(client.ip, client.port) : addresses.remote,
    downstreamDirectRemoteAddress: addresses.direct,
    downstreamLocalAddress: addresses.local,
    requestedServerName: addresses.serverName,
    healthCheck: false,
  };
}

/** A connection's two addresses as access logs print them. */
interface Addresses {
  /** Envoy's remote address: a PROXY header's, else the peer's. */
  remote: string | undefined;
  /** The peer's. */
  direct: string | undefined;
  local: string | undefined;
  /** The connection's SNI (%REQUESTED_SERVER_NAME%). */
  serverName: string | undefined;
}

/**
 * The addresses of each connection, made once for all its requests (a keep-alive connection
 * carries many), and read while the socket is still open: a request can finish after its
 * connection was cut, when the socket has forgotten them.
 */
const addressesOf = new WeakMap<object, Addresses>();

function socketAddresses(socket: DownstreamRequest['socket']): Addresses {
  let addresses = addressesOf.get(socket);
  if (addresses === undefined) {
    const origin = connectionOrigin(socket);
    const direct = addressText(socket.remoteAddress, socket.remotePort);
    addresses = {
      remote: origin ? addressText(origin.remote.ip, origin.remote.port) : direct,
      direct,
      local: origin ? addressText(origin.local.ip, origin.local.port) : addressText(socket.localAddress, socket.localPort),
      serverName: requestedServerName(socket as ConnectionAddresses),
    };
    addressesOf.set(socket, addresses);
  }
  return addresses;
}
