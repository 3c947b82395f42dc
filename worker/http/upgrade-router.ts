import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { httpModule } from '../../shared/builtins.js';
import { REASON_PHRASES } from '../../shared/http-status.js';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import type { OutgoingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { http2Module } from '../../shared/builtins.js';
import type { Socket } from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import { ResponseFlag } from '../../shared/access-log/entry.js';
import { getLogger } from '../../shared/log/logger.js';
import { outcomeOfStatus, type ResponseOutcome } from '../../shared/upstream/outcomes.js';
import { countRequestOverflow, type CircuitBreaker } from '../upstream/circuit-breaker.js';
import type { Cluster, Host } from '../upstream/cluster.js';
import { connectToHost } from '../upstream/host-connection.js';
import { pump, type FlowSink } from '../tcp/flow-control.js';
import { LocalReply, sendLocalReply } from './local-reply.js';
import type { ForwardAction } from '../../shared/http/route-table.js';
import { downstreamResponseHeaders, routedCluster, type ForwardContext } from './forward-context.js';
import { classify, connectLog, FAILURE_LOG, type Failure } from './upstream-failures.js';
import { upstreamHeaders } from './upstream-headers.js';

/**
 * The router's path for tunnels: an upgrade the connection manager allowed (WebSocket or another
 * protocol), a CONNECT, and a POST a route terminates. The request goes to a host of the route's
 * cluster on a connection (HTTP/1.1) or stream (HTTP/2) of its own; once the upstream accepts, the
 * client and the upstream are joined byte for byte until either ends, each side's buffer limit
 * holding back the other's reading; any other answer goes to the client as a response, and an
 * HTTP/1.1 connection then closes.
 *
 * - An upgrade: the upstream's 101 (HTTP/2: a 2xx) accepts. As Envoy transforms them, an HTTP/2
 *   client's extended CONNECT (RFC 8441) reaches an HTTP/1.1 upstream as GET with Upgrade, and the
 *   101 reaches it as 200; an HTTP/1.1 client's Upgrade reaches an HTTP/2 upstream as an
 *   extended CONNECT, and its 200 comes back as 101.
 * - A CONNECT whose route has no connect_config is proxied: CONNECT upstream, its 2xx accepts.
 * - A CONNECT whose route has connect_config (and, with allow_post, a POST) is terminated: the
 *   payload goes to the host as TCP, and the client gets 200 once the connection is up.
 *
 * The route timeout covers the handshake and stops at its answer; the stream idle timeout then
 * covers the tunnel. No retry, no mirror: what was sent on a tunnel cannot be replayed.
 */

const log = getLogger('router', import.meta.url);

/**
 * The client's side of a tunnel: an HTTP/1.1 connection Node's parser let go of (an upgrade, a
 * CONNECT), an HTTP/2 stream (extended or plain CONNECT), or a request's body and its response's
 * (a POST a route terminates).
 */
export type UpgradeDownstream = { kind: 'h1'; socket: Socket; head: Buffer } | { kind: 'h2'; stream: ServerHttp2Stream } | { kind: 'body' };

/** One upgrade, from the connection manager's decision to the tunnel's end. */
export interface UpgradeRequest {
  /** The protocol asked for: the Upgrade header, HTTP/2's :protocol, CONNECT, or POST (a terminated POST). */
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

export function forwardUpgrade(req: DownstreamRequest, res: DownstreamResponse, action: ForwardAction, ctx: ForwardContext, upgrade: UpgradeRequest): void {
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
    countRequestOverflow(breaker.overflow);
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
  const connect = upgrade.type.toUpperCase() === 'CONNECT';
  const mode: TunnelMode = action.terminateConnect && (connect || upgrade.downstream.kind === 'body') ? 'terminate' : connect ? 'connect' : 'upgrade';
  new UpgradeExchange(req, res, action, cluster, host, breaker, ctx, upgrade, mode).start();
}

/** What the upstream is asked for: an upgrade, a CONNECT, or nothing (a TCP connection carries the terminated payload). */
type TunnelMode = 'upgrade' | 'connect' | 'terminate';

class UpgradeExchange implements Tunnel {
  private readonly started = performance.now();
  private timer: NodeJS.Timeout | undefined;
  /** The upstream's side, once there is one to cut. */
  private upstream: Duplex | undefined;
  /** The handshake was answered (a tunnel, or a response that ends it). */
  private answered = false;
  private joined = false;
  private finished = false;
  /** Its connection was one of its own (connectToHost), reported to the outlier detector when made. */
  private connectReported = false;
  private resolveClosed!: () => void;
  readonly closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));

  constructor(
    private readonly req: DownstreamRequest,
    private readonly res: DownstreamResponse,
    private readonly action: ForwardAction,
    private readonly cluster: Cluster,
    private readonly host: Host,
    private readonly breaker: CircuitBreaker,
    private readonly ctx: ForwardContext,
    private readonly upgrade: UpgradeRequest,
    private readonly mode: TunnelMode,
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
    if (this.mode === 'terminate') this.viaTcp();
    else if (cluster.http2) this.viaHttp2();
    else this.viaHttp1();
  }

  /** A terminated CONNECT or POST: a TCP connection to the host; the client's 200 once it is up. */
  private viaTcp(): void {
    this.breaker.acquire('cx');
    this.connectReported = true;
    const socket: Socket = connectToHost(this.host, {
      connected: () => {
        if (this.answered) socket.destroy();
        else this.join(200, {}, socket, Buffer.alloc(0));
      },
      failed: (err) => this.fail('connect', err, true),
      closed: () => this.breaker.release('cx'),
    }, true, this.req.socket);
    this.upstream = socket;
  }

  /** The request on a connection of its own (an upgraded connection never returns to a pool). */
  private viaHttp1(): void {
    const headers = upstreamHeaders(this.ctx.headers, this.ctx.authority, this.action.timeoutMs);
    if (this.mode === 'upgrade') headers.push('connection', 'upgrade', 'upgrade', this.upgrade.type);
    this.breaker.acquire('cx');
    this.connectReported = true;
    const socket = connectToHost(this.host, {
      connected: () => undefined,
      failed: (err) => this.fail('connect', err, true),
      closed: () => this.breaker.release('cx'),
    }, false, this.req.socket);
    this.upstream = socket;
    // An HTTP/2 client's extended CONNECT goes to HTTP/1.1 as GET (Envoy's transformation); a CONNECT names its authority.
    const method = this.mode === 'connect' ? 'CONNECT' : this.req.method === 'CONNECT' ? 'GET' : (this.req.method ?? 'GET');
    const path = this.mode === 'connect' ? this.ctx.authority : this.ctx.path;
    const request = httpModule().request({ createConnection: () => socket, method, path, headers, setHost: false });
    const accepted = (response: IncomingMessage, upgraded: Socket, head: Buffer) => {
      if (this.answered) return upgraded.destroy();
      const status = response.statusCode ?? 502;
      if (this.mode === 'upgrade' || (status >= 200 && status < 300)) this.join(status, response.headers, upgraded, head);
      else {
        // A CONNECT refused: its answer's head goes to the client (Node has parsed no body for it), and both connections close.
        this.refused(status, response.headers, undefined);
        upgraded.destroy();
      }
    };
    request.on('upgrade', accepted);
    request.on('connect', accepted);
    request.on('response', (response: IncomingMessage) => this.refused(response.statusCode ?? 502, response.headers, response));
    request.on('error', (err) => this.fail(classify(err), err));
    request.end();
  }

  /** A stream on the host's HTTP/2 connection: an extended CONNECT for an upgrade, a CONNECT for a CONNECT. */
  private viaHttp2(): void {
    const out: OutgoingHttpHeaders =
      this.mode === 'connect' ? { ':method': 'CONNECT' } : { ':method': 'CONNECT', ':protocol': this.upgrade.type, ':scheme': this.host.tls ? 'https' : 'http', ':path': this.ctx.path };
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

  /**
   * The upstream accepted: the client gets its answer (an upgrade's 101, or 200 to an HTTP/2
   * client; a CONNECT's 2xx; a terminated tunnel's 200), then the tunnel carries bytes both ways.
   */
  private join(status: number, headers: IncomingHttpHeaders, upstream: Duplex, upstreamHead: Buffer): void {
    this.answered = true;
    this.joined = true;
    this.upstream = upstream;
    clearTimeout(this.timer);
    this.upgrade.tunnel = this;
    this.upgrade.joined?.(this);
    if (this.mode !== 'terminate') {
      this.cluster.stats.response(status, this.started);
      this.host.stats.rqSuccess.inc();
      this.outcome(outcomeOfStatus(status));
    }
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
    let sink: FlowSink;
    if (down.kind === 'h1') {
      const upgrade = this.mode === 'upgrade';
      const shown = upgrade ? 101 : status;
      const list = downstreamResponseHeaders(shown, upgrade ? { ...headers, connection: 'upgrade', upgrade: headers.upgrade ?? this.upgrade.type } : headers, this.ctx, this.started, upgrade ? UPGRADE_HEADERS : undefined);
      let head = `HTTP/1.1 ${shown} ${upgrade ? 'Switching Protocols' : (REASON_PHRASES[shown] ?? '')}\r\n`;
      for (let i = 0; i < list.length; i += 2) head += `${list[i]}: ${list[i + 1]}\r\n`;
      down.socket.write(`${head}\r\n`, 'latin1');
      record?.upgradedWith(shown, list);
      source = sink = down.socket;
      if (down.head.length) {
        countIn?.(down.head.length);
        upstream.write(down.head);
      }
    } else {
      // HTTP/2 answers an upgrade with 200; a terminated POST's payload comes back as a 200's body.
      const shown = this.mode === 'upgrade' ? 200 : status;
      this.res.writeHead(shown, downstreamResponseHeaders(shown, headers, this.ctx, this.started));
      source = this.req;
      sink = down.kind === 'h2' ? down.stream : this.res;
    }
    if (upstreamHead.length) {
      countOut?.(upstreamHead.length);
      sink.write(upstreamHead);
    }
    pump(source, upstream, this.cluster.bufferLimit, { backedUp: flow.backedUp, drained: flow.drained }, down.kind === 'h1' ? countIn : undefined);
    pump(upstream, sink, this.ctx.bufferLimit, { pausedReading: flow.pausedReading, resumedReading: flow.resumedReading }, down.kind === 'body' ? undefined : countOut);
    // Either side failing takes the other with it; a side that ends ends the other (pump), and the tunnel is over when both have closed.
    // A side reset mid-tunnel is logged as Envoy logs it: UR for the upstream's, DC for the client's.
    upstream.on('error', () => {
      if (record) record.responseFlags |= ResponseFlag.upstreamRemoteReset;
      this.destroyDownstream();
    });
    sink.on('error', () => {
      if (record) record.responseFlags |= ResponseFlag.downstreamConnectionTermination;
      upstream.destroy();
    });
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
    if (down.kind === 'h1') {
      down.socket.once('close', downClosed);
      down.socket.resume();
    } else if (down.kind === 'h2') down.stream.once('close', downClosed);
    else this.res.once('close', downClosed);
  }

  /** The upstream's answer for the outlier detector: its connection was reported already when it was one of its own. */
  private outcome(kind: ResponseOutcome): void {
    if (this.connectReported) this.host.respondedOnReportedConnection(kind);
    else this.host.responded(kind);
  }

  /** Any other answer: a response like another (without a body when none can be read), after which an HTTP/1.1 client's connection closes. */
  private refused(status: number, headers: IncomingHttpHeaders, body: Readable | undefined): void {
    this.answered = true;
    clearTimeout(this.timer);
    this.cluster.stats.response(status, this.started);
    (status >= 500 ? this.host.stats.rqError : this.host.stats.rqSuccess).inc();
    this.outcome(outcomeOfStatus(status));
    const record = this.ctx.record;
    if (record) {
      record.upstreamResponded();
      record.responseCodeDetails = 'via_upstream';
    }
    this.res.writeHead(status, downstreamResponseHeaders(status, headers, this.ctx, this.started));
    if (!body) {
      this.res.end();
      this.finish();
      return;
    }
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
    } else {
      cs.cxDestroyRemoteWithActiveRq.inc();
      cs.cxDestroyWithActiveRq.inc();
    }
    // Its connection, if it had one of its own, was reported when it was made (connectToHost).
    if (!counted) this.host.localFailure(false);
    const kind = failure === 'per_try_timeout' || failure === 'per_try_idle_timeout' ? 'timeout' : failure;
    const connect = kind === 'connect' ? connectLog(err) : undefined;
    const record = this.ctx.record;
    if (record) {
      record.responseFlags |= FAILURE_LOG[kind].flag;
      record.responseCodeDetails = connect?.details ?? FAILURE_LOG[kind].details;
      if (connect) record.upstreamTransportFailureReason = connect.transport;
    }
    const reply = connect ? { status: 503, body: `upstream connect error or disconnect/reset before headers. reset reason: ${connect.reason}` } : kind === 'timeout' ? LocalReply.upstreamTimeout : LocalReply.connectionTermination;
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
    else if (down.kind === 'h2') down.stream.end();
    else this.res.end();
  }

  private destroyDownstream(): void {
    const down = this.upgrade.downstream;
    if (down.kind === 'h1') down.socket.destroy();
    else if (down.kind === 'body') this.res.destroy();
    else if (!down.stream.destroyed) down.stream.close(http2Module().constants.NGHTTP2_CONNECT_ERROR);
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
