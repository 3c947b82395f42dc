import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { httpModule } from '../../shared/builtins.js';
import type { OutgoingHttpHeaders } from 'node:http2';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { AccessLogEntry } from '../../shared/access-log/entry.js';
import { compileHeadersToAdd, applyHeadersToAdd, compileHeaderValue, type HeaderToAdd, type MutableHeaders } from '../../shared/header-mutation.js';
import type { LogFormatter } from '../../shared/access-log/format.js';
import { obj } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import type { Host } from '../upstream/cluster.js';
import { connectToHost } from '../upstream/host-connection.js';
import { CONNECT_TIMEOUT } from '../upstream/upstream-handler.js';

/**
 * TcpProxy.tunneling_config: a downstream TCP connection carried inside an HTTP request to the
 * cluster's host, as Envoy's `encapsulate_in_*` configurations do it: a CONNECT to `hostname`
 * (HTTP/2, multiplexed on the host's connection; or HTTP/1.1, a connection of its own), or with
 * `use_post` a POST to `post_path` (default `/`) whose body carries the bytes out and whose
 * response's body carries them back. `hostname` and `headers_to_add` take the access-log
 * formatter's commands (%DOWNSTREAM_REMOTE_ADDRESS% …). The tunnel is established once the
 * upstream answers 2xx; any other answer, or a failure, closes the downstream connection.
 */

export class TunnelingConfig {
  private readonly hostname: LogFormatter;
  private readonly usePost: boolean;
  private readonly postPath: string;
  private readonly headersToAdd: HeaderToAdd[];

  constructor(config: JsonObject) {
    this.hostname = compileHeaderValue(String(config.hostname ?? ''));
    this.usePost = config.use_post === true;
    this.postPath = typeof config.post_path === 'string' && config.post_path ? config.post_path : '/';
    this.headersToAdd = compileHeadersToAdd(config.headers_to_add);
  }

  static from(config: unknown): TunnelingConfig | undefined {
    return config === undefined ? undefined : new TunnelingConfig(obj(config));
  }

  /** The request's headers beyond its method and target: headers_to_add, formatted for this connection. */
  private extraHeaders(entry: AccessLogEntry): MutableHeaders {
    const headers: MutableHeaders = {};
    applyHeadersToAdd(headers, this.headersToAdd, entry);
    return headers;
  }

  /**
   * Opens the tunnel to `host`; `established` gets the upstream side (the bytes both ways) once
   * the upstream answered 2xx, `failed` why it was not (a connect failure, a status, a reset).
   * Returns what to destroy if the downstream goes first. `downstream`: the connection carried,
   * which a PROXY header to the host names (upstream_proxy_protocol).
   */
  open(host: Host, entry: AccessLogEntry, events: { established(upstream: Duplex): void; failed(why: string, connectFailure: boolean): void }, downstream: Socket): { destroy(): void } {
    const hostname = this.hostname.format(entry);
    const extra = this.extraHeaders(entry);
    let settled = false;
    const established = (upstream: Duplex) => {
      if (settled) return upstream.destroy();
      settled = true;
      events.established(upstream);
    };
    const failed = (why: string, connectFailure = false) => {
      if (settled) return;
      settled = true;
      events.failed(why, connectFailure);
    };
    if (host.cluster.http2) {
      const headers: OutgoingHttpHeaders = this.usePost
        ? { ':method': 'POST', ':scheme': host.cluster.tls ? 'https' : 'http', ':authority': hostname, ':path': this.postPath, ...extra }
        : { ':method': 'CONNECT', ':authority': hostname, ...extra };
      let tunnel: ReturnType<ReturnType<Host['h2Connection']>['tunnel']>;
      try {
        tunnel = host.h2Connection(0, undefined, { socket: downstream }).tunnel(headers);
      } catch (err) {
        failed((err as Error).message);
        return { destroy: () => undefined };
      }
      const { stream, failure } = tunnel;
      stream.once('response', (h: IncomingHttpHeaders) => {
        const status = Number(h[':status']);
        if (status >= 200 && status < 300) established(stream);
        else {
          failed(`the tunnel was answered ${status}`);
          stream.close();
        }
      });
      stream.on('error', (err: Error) => {
        const e = failure(err);
        failed(e.message, e.code === 'ECONNREFUSED' || e.code === CONNECT_TIMEOUT);
      });
      stream.once('close', () => {
        const e = failure();
        failed(e.message, e.code === 'ECONNREFUSED' || e.code === CONNECT_TIMEOUT);
      });
      return stream;
    }
    // HTTP/1.1: a connection of its own for each tunnel (a connection against the circuit breaker too).
    const breaker = host.cluster.breakers[0];
    breaker.acquire('cx');
    const socket: Socket = connectToHost(host, {
      connected: () => undefined,
      failed: (err) => failed(err.message, true),
      closed: () => {
        breaker.release('cx');
        failed('the upstream connection closed');
      },
    }, true, downstream);
    const headers: OutgoingHttpHeaders = { host: hostname, ...extra };
    const request = httpModule().request({ createConnection: () => socket, method: this.usePost ? 'POST' : 'CONNECT', path: this.usePost ? this.postPath : hostname, headers, setHost: false });
    request.on('error', (err) => failed(err.message));
    if (this.usePost) {
      // The POST's body is the downstream's bytes (chunked); its response's body, the upstream's.
      request.on('response', (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) established(Duplex.from({ readable: response, writable: request }));
        else {
          failed(`the tunnel was answered ${status}`);
          socket.destroy();
        }
      });
      request.flushHeaders();
    } else {
      request.on('connect', (response: IncomingMessage, upgraded: Socket, head: Buffer) => {
        const status = response.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          failed(`the tunnel was answered ${status}`);
          upgraded.destroy();
          return;
        }
        if (head.length) upgraded.unshift(head);
        established(upgraded);
      });
      request.end();
    }
    return socket;
  }
}
