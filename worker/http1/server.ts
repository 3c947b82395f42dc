import type { Socket } from 'node:net';
import { ServerConnection, type Http1ServerHandlers, type Http1ServerOptions } from './server-connection.js';

export type { Http1ServerHandlers, Http1ServerOptions } from './server-connection.js';

/**
 * The downstream side of HTTP/1.1 on `net` sockets with Node's own llhttp: what node:http's
 * server did for the connection manager, for less per request (no IncomingMessage /
 * ServerResponse stream machinery, no header copies, one write per response where node:http
 * made a writev or two). Node's parser is the one node:http runs, strict as it is about what
 * could smuggle a request. Kept as node:http behaved, since clients and tests see it:
 * - requests on a connection are served one at a time, in order (pipelined ones wait, their
 *   socket paused, as Envoy's HTTP/1 codec does rather than node:http's concurrent handlers);
 * - `Expect: 100-continue` is answered with `100 Continue`, any other expectation with 417, and
 *   an HTTP/1.1 request without Host with 400 (node:http's requireHostHeader);
 * - request_headers_timeout and request_timeout are checked every `checkIntervalMs` for
 *   connections reading a request (408 through `clientError`), as node:http checked them;
 * - after a response, an idle connection waits `keepAliveTimeout` + 1 s (node:http's margin), as
 *   long as it was told when that response was sent, then the socket says 'timeout' (the idle
 *   timeout's count) and is closed; checked by the same periodic check as the two timeouts
 *   above, so that serving a request does not re-arm a socket timer twice (as node:http did);
 * - a stream's idle timeout calls the request's handler (`setStreamIdleTimeout`, the connection
 *   manager's), or (`req.setTimeout`) says 'timeout' to the request being read and to the response
 *   being written, and closes the connection when none of them listens. A timeout of at
 *   least four check intervals is kept by the same check, which sees activity in the socket's
 *   byte counts (read, written, still queued): no timer re-armed on every read and write, as a
 *   socket timer is, and nothing per request but a field set; it fires up to two intervals late
 *   (at most half as late again as it says). A shorter one is the socket's own timer, exact, set
 *   for each request and cleared after its response.
 * - an Upgrade or CONNECT leaves the parser: `upgrade(req, socket, head)`.
 */

export class Http1Server {
  /** node:http's keepAliveTimeout: changed while draining (see the connection manager's shortenKeepAlive). */
  keepAliveTimeout: number;
  private readonly connections = new Set<ServerConnection>();
  private checker: NodeJS.Timeout | undefined;

  constructor(
    readonly options: Http1ServerOptions,
    readonly handlers: Http1ServerHandlers,
  ) {
    this.keepAliveTimeout = options.keepAliveTimeoutMs;
  }

  /** Serves a connection: plaintext, TLS handshaken, or one handed back after an h2c offer. */
  connection(socket: Socket): void {
    const connection = new ServerConnection(this, socket);
    this.connections.add(connection);
    socket.once('close', () => {
      this.connections.delete(connection);
      if (this.connections.size === 0) this.stopChecking();
    });
    if (!this.checker && (this.options.headersTimeoutMs > 0 || this.options.requestTimeoutMs > 0 || this.keepAliveTimeout > 0)) {
      this.checker = setInterval(() => this.checkTimeouts(), this.options.checkIntervalMs);
      this.checker.unref();
    }
  }

  /** Whether the periodic check runs at least every `ms`. */
  checksEvery(ms: number): boolean {
    return this.checker !== undefined && this.options.checkIntervalMs <= ms;
  }

  /** Closes the connections that have no request under way (node:http's closeIdleConnections). */
  closeIdleConnections(): void {
    for (const connection of this.connections) if (connection.idle()) connection.socket.destroy();
  }

  private stopChecking(): void {
    clearInterval(this.checker);
    this.checker = undefined;
  }

  private checkTimeouts(): void {
    const now = performance.now();
    const { headersTimeoutMs, requestTimeoutMs } = this.options;
    for (const connection of this.connections) connection.checkTimeout(now, headersTimeoutMs, requestTimeoutMs);
  }
}

