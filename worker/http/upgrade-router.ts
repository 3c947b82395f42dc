import { request as http1Request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { constants as h2, type OutgoingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex, Readable, Writable } from 'node:stream';
import { ResponseFlag } from '../../shared/access-log/entry.js';
import { getLogger } from '../../shared/log/logger.js';
import { outcomeOfStatus } from '../../shared/upstream/outcomes.js';
import type { CircuitBreaker } from '../upstream/circuit-breaker.js';
import type { Cluster, Host } from '../upstream/cluster.js';
import { connectToHost } from '../upstream/host-connection.js';
import { pump } from '../tcp/flow-control.js';
import { LocalReply, sendLocalReply } from './local-reply.js';
import type { ForwardAction } from './route-table.js';
import { classify, downstreamResponseHeaders, FAILURE_LOG, routedCluster, type Failure, type ForwardContext } from './router.js';
import { upstreamHeaders } from './upstream-headers.js';

/**
 * The router's path for an upgrade the connection manager allowed (WebSocket or another
 * protocol): the request goes to a host of the route's cluster on a connection (HTTP/1.1) or
 * stream (HTTP/2 extended CONNECT, RFC 8441) of its own; a 101 (HTTP/2: a 2xx) joins the client
 * and the upstream byte for byte until either ends, each side's buffer limit holding back the
 * other's reading; any other answer goes to the client as a response, and the connection closes.
 *
 * As Envoy transforms them: an HTTP/2 client's extended CONNECT reaches an HTTP/1.1 upstream as
 * GET with Upgrade and Connection, and the upstream's 101 reaches it as 200; an HTTP/1.1 client's
 * Upgrade reaches an HTTP/2 upstream as an extended CONNECT, and its 200 comes back as 101. The
 * route timeout covers the handshake and stops at its answer; the stream idle timeout then covers
 * the tunnel. No retry, no mirror: what was sent on an upgraded stream cannot be replayed.
 */

const log = getLogger('router', import.meta.url);

/** The client's side of an upgrade: an HTTP/1.1 connection Node's parser let go of, or an HTTP/2 stream. */
export type UpgradeDownstream = { kind: 'h1'; socket: Socket; head: Buffer } | { kind: 'h2'; stream: ServerHttp2Stream };

/** One upgrade, from the connection manager's decision to the tunnel's end. */
export interface UpgradeRequest {
  /** The protocol asked for: the Upgrade header, or HTTP/2's :protocol. */
  type: string;
  downstream: UpgradeDownstream;
  /** The tunnel, once the upstream accepted: the connection manager times it out and drains it. */
  tunnel?: Tunnel;
  /** Told when the tunnel is joined. */
  joined?: (tunnel: Tunnel) => void;
}

/** A joined tunnel, as the connection manager sees it. */
export interface Tunnel {
  /** A timeout cut it (stream_idle_timeout: SI; max_stream_duration: DT): both sides go, with this flag and details in the access log. */
  cut(flag: number, details: string): void;
  /** The drain is over (hot restart, /drain_listeners): both sides are ended (FIN, or END_STREAM). */
  close(): void;
  readonly closed: Promise<void>;
}

const UPGRADE_HEADERS = new Set(['upgrade', 'connection']);

export function forwardUpgrade(req: IncomingMessage, res: ServerResponse, action: ForwardAction, ctx: ForwardContext, upgrade: UpgradeRequest): void {
  const cluster = routedCluster(res, action, ctx);
  if (!cluster) return;
  const breaker = cluster.breakers[action.priority];
  const record = ctx.record;
  if (record) record.upstreamCluster = cluster.name;
  const refuse = (flag: number, details: string, reply: { status: number; body: string }) => {
    if (record) {
      record.responseFlags |= flag;
      record.responseCodeDetails = details;
    }
    sendLocalReply(res, reply.status, reply.body, ctx.reply);
  };
  if (!breaker.tryAcquire('rq')) {
    breaker.overflow.pending.inc();
    refuse(ResponseFlag.upstreamOverflow, 'upstream_reset_before_response_started{overflow}', LocalReply.overflow);
    return;
  }
  const host = cluster.pickHost(ctx.hash);
  if (!host) {
    breaker.release('rq');
    cluster.stats.cxNoneHealthy.inc();
    refuse(ResponseFlag.noHealthyUpstream, 'no_healthy_upstream', LocalReply.noHealthyUpstream);
    return;
  }
  new UpgradeExchange(req, res, action, cluster, host, breaker, ctx, upgrade).start();
}

class UpgradeExchange implements Tunnel {
  private readonly started = performance.now();
  private timer: NodeJS.Timeout | undefined;
  /** The upstream's side, once there is one to cut. */
  private upstream: Duplex | undefined;
  /** The handshake was answered (a tunnel, or a response that ends it). */
  private answered = false;
  private joined = false;
  private finished = false;
  private resolveClosed!: () => void;
  readonly closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly action: ForwardAction,
    private readonly cluster: Cluster,
    private readonly host: Host,
    private readonly breaker: CircuitBreaker,
    private readonly ctx: ForwardContext,
    private readonly upgrade: UpgradeRequest,
  ) {}

  start(): void {
    const { host, cluster, ctx } = this;
    if (ctx.record) {
      ctx.record.upstreamHost = host.address;
      ctx.record.attemptCount = 1;
    }
    host.activeRequests++;
    host.stats.rqTotal.inc();
    host.stats.rqActive.inc();
    cluster.stats.rqTotal.inc();
    cluster.stats.rqActive.inc();
    if (this.action.timeoutMs > 0) this.timer = setTimeout(() => this.fail('timeout', new Error('route timeout')), this.action.timeoutMs);
    // The client left before the handshake was answered: the upstream's side goes too.
    this.res.once('close', () => {
      if (!this.answered) this.fail('client', new Error('downstream went away'));
    });
    if (cluster.http2) this.viaHttp2();
    else this.viaHttp1();
  }

  /** The request on a connection of its own (an upgraded connection never returns to a pool). */
  private viaHttp1(): void {
    const headers = upstreamHeaders(this.ctx.headers, this.ctx.authority, this.action.timeoutMs);
    headers.push('connection', 'upgrade', 'upgrade', this.upgrade.type);
    this.breaker.acquire('cx');
    const socket = connectToHost(this.host, {
      connected: () => undefined,
      failed: (err) => this.fail('connect', err, true),
      closed: () => this.breaker.release('cx'),
    });
    this.upstream = socket;
    // An HTTP/2 client's extended CONNECT goes to HTTP/1.1 as GET (Envoy's transformation).
    const method = this.req.method === 'CONNECT' ? 'GET' : (this.req.method ?? 'GET');
    const request = http1Request({ createConnection: () => socket, method, path: this.ctx.path, headers, setHost: false });
    request.on('upgrade', (response: IncomingMessage, upgraded: Socket, head: Buffer) => {
      if (this.answered) return upgraded.destroy();
      this.join(response.statusCode ?? 101, response.headers, upgraded, head);
    });
    request.on('response', (response: IncomingMessage) => this.refused(response.statusCode ?? 502, response.headers, response));
    request.on('error', (err) => this.fail(classify(err), err));
    request.end();
  }

  /** An extended CONNECT stream on the host's HTTP/2 connection. */
  private viaHttp2(): void {
    const out: OutgoingHttpHeaders = { ':method': 'CONNECT', ':protocol': this.upgrade.type, ':scheme': this.cluster.tls ? 'https' : 'http', ':path': this.ctx.path };
    const flat = upstreamHeaders(this.ctx.headers, this.ctx.authority, this.action.timeoutMs);
    for (let i = 0; i < flat.length; i += 2) {
      const k = flat[i]!;
      const v = flat[i + 1]!;
      if (k === 'host') out[':authority'] = v;
      else if (k !== 'content-length' || v !== '0') {
        const prev = out[k];
        out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [String(prev), v];
      }
    }
    let tunnel: ReturnType<ReturnType<Host['h2Connection']>['tunnel']>;
    try {
      tunnel = this.host.h2Connection(this.action.priority).tunnel(out);
    } catch (err) {
      this.fail('reset', err as Error);
      return;
    }
    const { stream, failure } = tunnel;
    this.upstream = stream;
    stream.once('response', (h: IncomingHttpHeaders) => {
      const status = Number(h[':status']);
      if (status >= 200 && status < 300) this.join(status, h, stream, Buffer.alloc(0));
      else this.refused(status, h, stream);
    });
    stream.on('error', (err: Error) => this.fail(classify(failure(err)), failure(err)));
    stream.once('close', () => {
      if (!this.answered) {
        const err = failure();
        this.fail(classify(err), err);
      }
    });
  }

  /** The upstream accepted: the client gets its 101 (HTTP/2: 200), then the tunnel carries bytes both ways. */
  private join(status: number, headers: IncomingHttpHeaders, upstream: Duplex, upstreamHead: Buffer): void {
    this.answered = true;
    this.joined = true;
    this.upstream = upstream;
    clearTimeout(this.timer);
    this.upgrade.tunnel = this;
    this.upgrade.joined?.(this);
    this.cluster.stats.response(status, this.started);
    this.host.stats.rqSuccess.inc();
    this.host.outcome(outcomeOfStatus(status));
    const record = this.ctx.record;
    if (record) {
      record.upstreamResponded();
      record.responseCodeDetails = 'via_upstream';
    }
    const down = this.upgrade.downstream;
    const flow = this.cluster.stats.flow;
    const countIn = record ? (n: number) => (record.bytesReceived += n) : undefined;
    const countOut = record ? (n: number) => (record.bytesSent += n) : undefined;
    let source: Readable;
    let sink: Writable;
    if (down.kind === 'h1') {
      const h = { ...headers, connection: 'upgrade', upgrade: headers.upgrade ?? this.upgrade.type };
      const list = downstreamResponseHeaders(101, h, this.ctx, this.started, UPGRADE_HEADERS);
      let head = 'HTTP/1.1 101 Switching Protocols\r\n';
      for (let i = 0; i < list.length; i += 2) head += `${list[i]}: ${list[i + 1]}\r\n`;
      down.socket.write(`${head}\r\n`, 'latin1');
      record?.upgradedWith(101, list);
      source = sink = down.socket;
      if (down.head.length) {
        countIn?.(down.head.length);
        upstream.write(down.head);
      }
    } else {
      const list = downstreamResponseHeaders(200, headers, this.ctx, this.started);
      this.res.writeHead(200, list);
      source = this.req;
      sink = down.stream;
    }
    if (upstreamHead.length) {
      countOut?.(upstreamHead.length);
      sink.write(upstreamHead);
    }
    pump(source, upstream, this.cluster.bufferLimit, { backedUp: flow.backedUp, drained: flow.drained }, down.kind === 'h1' ? countIn : undefined);
    pump(upstream, sink, this.ctx.bufferLimit, { pausedReading: flow.pausedReading, resumedReading: flow.resumedReading }, countOut);
    // Either side failing takes the other with it; a side that ends ends the other (pump), and the tunnel is over when both have closed.
    upstream.on('error', () => this.destroyDownstream());
    sink.on('error', () => upstream.destroy());
    let open = 2;
    const closedOne = () => {
      if (--open === 0) this.finish();
    };
    upstream.once('close', () => {
      if (!sink.writableEnded) sink.end();
      closedOne();
    });
    const downClosed = () => {
      if (!upstream.writableEnded) upstream.end();
      closedOne();
    };
    if (down.kind === 'h1') down.socket.once('close', downClosed);
    else down.stream.once('close', downClosed);
    if (down.kind === 'h1') down.socket.resume();
  }

  /** Any other answer to the upgrade: a response like another, after which the client's connection closes. */
  private refused(status: number, headers: IncomingHttpHeaders, body: Readable): void {
    this.answered = true;
    clearTimeout(this.timer);
    this.cluster.stats.response(status, this.started);
    (status >= 500 ? this.host.stats.rqError : this.host.stats.rqSuccess).inc();
    this.host.outcome(outcomeOfStatus(status));
    const record = this.ctx.record;
    if (record) {
      record.upstreamResponded();
      record.responseCodeDetails = 'via_upstream';
    }
    this.res.writeHead(status, downstreamResponseHeaders(status, headers, this.ctx, this.started));
    body.on('data', (chunk: Buffer) => this.res.write(chunk));
    // The upstream's side is not reused: what it would read next was meant for an upgraded protocol.
    body.once('end', () => {
      this.res.end();
      this.upstream?.destroy();
      this.finish();
    });
    body.once('error', () => {
      this.res.destroy();
      this.upstream?.destroy();
      this.finish();
    });
  }

  /** The handshake failed (connect, reset, route timeout) or the client left: Envoy's local reply, or nothing for a client gone. */
  private fail(failure: Failure, err: Error & { code?: string }, counted = false): void {
    if (this.answered || this.finished) return;
    this.answered = true;
    clearTimeout(this.timer);
    this.upstream?.destroy();
    this.finish();
    if (failure === 'client') return;
    log.debug(`upgrade to cluster '${this.cluster.name}' host ${this.host.address}: ${failure} (${err.message})`);
    const cs = this.cluster.stats;
    if (failure === 'connect') {
      if (!counted) cs.cxConnectFail.inc();
    } else if (failure === 'timeout') {
      cs.rqTimeout.inc();
      this.host.stats.rqTimeout.inc();
    } else cs.cxDestroyRemote.inc();
    if (!counted) this.host.outcome('G');
    const kind = failure === 'per_try_timeout' ? 'timeout' : failure;
    const record = this.ctx.record;
    if (record) {
      record.responseFlags |= FAILURE_LOG[kind].flag;
      record.responseCodeDetails = FAILURE_LOG[kind].details;
    }
    const reply = kind === 'connect' ? LocalReply.connectFailure : kind === 'timeout' ? LocalReply.upstreamTimeout : LocalReply.connectionTermination;
    sendLocalReply(this.res, reply.status, reply.body, this.ctx.reply);
  }

  cut(flag: number, details: string): void {
    const record = this.ctx.record;
    if (record) {
      record.responseFlags |= flag;
      record.responseCodeDetails = details;
    }
    this.upstream?.destroy();
    this.destroyDownstream();
  }

  close(): void {
    if (!this.joined) return;
    this.upstream?.end();
    const down = this.upgrade.downstream;
    if (down.kind === 'h1') down.socket.end();
    else down.stream.end();
  }

  private destroyDownstream(): void {
    const down = this.upgrade.downstream;
    if (down.kind === 'h1') down.socket.destroy();
    else if (!down.stream.destroyed) down.stream.close(h2.NGHTTP2_CONNECT_ERROR);
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.breaker.release('rq');
    this.cluster.stats.rqActive.dec();
    this.host.activeRequests--;
    this.host.stats.rqActive.dec();
    this.resolveClosed();
  }
}
