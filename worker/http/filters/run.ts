import { localOf } from '../../../shared/network/connection-origin.js';
import type { DownstreamRequest, DownstreamResponse } from '../downstream.js';
import type { Readable, Transform } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { AccessLogEntry } from '../../../shared/access-log/entry.js';
import type { JsonObject } from '../../../shared/config/proto-json.js';
import type { MutableHeaders } from '../../../shared/header-mutation.js';
import type { RequestView } from '../../../shared/matchers.js';
import { requestEntry, type HttpExchangeRecord } from '../exchange-record.js';
import { sendLocalReply, type LocalReplyContext } from '../local-reply.js';
import { readBodyUpTo, requestHasBody } from '../request-body.js';
import type { Route } from '../../../shared/http/route-table.js';
import { perFilterConfigs } from '../../../shared/http/per-filter-config.js';
import { ResponseBodyPipeline } from './response-body.js';
import type { BodyCapture } from '../../../shared/http/body-capture.js';
import type { ClientAddress } from '../request-headers.js';
import type { ConnectionView, FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../shared/http/filter-api.js';

/**
 * One request through a connection manager's HTTP filters (see shared/http/filter-api.ts): what each
 * filter is given of the exchange, and the order they run in.
 */

export interface FilterExchange {
  req: DownstreamRequest;
  res: DownstreamResponse;
  rq: RequestView;
  route: Route | undefined;
  clusterName: string | undefined;
  /** The request's local replies; its `encode` is set once the filters have seen the request. */
  reply: LocalReplyContext;
  record: HttpExchangeRecord | undefined;
  /** The client's address as the connection manager found it (request-headers.ts). */
  client: ClientAddress;
  /** The health-check filter found the request to be one: its span is not reported. */
  healthCheck?: () => void;
  /** The request body once a filter has read it whole (readBody): the router sends it as read. */
  body?: Buffer;
  /** The request body as a filter transforms it (transformRequestBody): what the router and later readers get. */
  bodyStream?: Readable;
  /** Dynamic metadata the filters set (the access-log record holds the same object). */
  metadata?: Record<string, Record<string, unknown>>;
  /** The read in progress, for a second filter that asks meanwhile. */
  reading?: Promise<Buffer | 'too_large' | 'aborted'>;
  /** The response body's transforms, once a filter adds one. */
  responseBody?: ResponseBodyPipeline;
}

/**
 * Runs the request through the filters, in order: 'stop' when one of them answered it, a
 * promise while one holds it. From then on every response of the request goes back through the
 * filters that saw it (`reply.encode`), in reverse order. A filter's own answer goes back through
 * every filter after it as well (Envoy's filter manager encodes a local reply from the chain's
 * end), and through those before it; it is made in the form its own response path would give it.
 */
export function runFilterChain(factories: readonly HttpFilterFactory[], x: FilterExchange): FilterDecision | Promise<FilterDecision> {
  const chain: ChainState = { x, factories, seen: [], connection: undefined };
  const from = (first: number): FilterDecision | Promise<FilterDecision> => {
    for (let i = first; i < factories.length; i++) {
      const factory = factories[i]!;
      const perRoute = perFilterConfigs(x.route?.perFilter.get(factory.name), factory.disabledByDefault);
      if (perRoute === 'disabled') continue;
      const filter = factory.create();
      const decision = filter.decodeHeaders(new FilterCall(chain, perRoute, chain.seen.length, i));
      chain.seen.push(filter);
      if (decision === 'stop') return 'stop';
      if (decision !== 'continue') return decision.then((d) => (d === 'stop' ? 'stop' : from(i + 1)));
    }
    x.reply.encode = encodeThrough(chain.seen);
    if (chain.seen.some((f) => f.encodeTrailers)) x.reply.encodeTrailers = trailersThrough(chain.seen);
    return 'continue';
  };
  return from(0);
}

/** What the filters of one request share: the exchange, the filters so far, the connection's view (made on first use). */
interface ChainState {
  x: FilterExchange;
  factories: readonly HttpFilterFactory[];
  seen: HttpFilter[];
  connection: ConnectionView | undefined;
}

/**
 * The filters after `index` that run for this route, made for a local reply of the filter at
 * `index`: they did not see the request (Envoy's filter manager made them with the stream), and
 * each is told so (answeredBefore) before the answer reaches it.
 */
function filtersAfter(chain: ChainState, index: number): HttpFilter[] {
  const out: HttpFilter[] = [];
  for (let i = index + 1; i < chain.factories.length; i++) {
    const factory = chain.factories[i]!;
    const perRoute = perFilterConfigs(chain.x.route?.perFilter.get(factory.name), factory.disabledByDefault);
    if (perRoute === 'disabled') continue;
    const filter = factory.create();
    if (!filter.encodeHeaders) continue;
    filter.answeredBefore?.(new FilterCall(chain, perRoute, chain.seen.length, i));
    out.push(filter);
  }
  return out;
}

function encodeThrough(filters: readonly HttpFilter[]): (status: number, headers: MutableHeaders) => void {
  return (status, headers) => {
    for (let i = filters.length - 1; i >= 0; i--) filters[i]!.encodeHeaders?.(status, headers);
  };
}

function trailersThrough(filters: readonly HttpFilter[]): (trailers: MutableHeaders) => void {
  return (trailers) => {
    for (let i = filters.length - 1; i >= 0; i--) filters[i]!.encodeTrailers?.(trailers);
  };
}

/**
 * The request as one filter sees it (shared/http/filter-api.ts): a small object per filter, its methods on
 * the prototype, so that a request through several filters allocates little.
 */
class FilterCall implements FilterRequest {
  constructor(
    private readonly chain: ChainState,
    readonly perRoute: JsonObject[],
    /** How many filters came before this one: a reply of this filter goes back through those. */
    private readonly position: number,
    /** This filter's place in the chain as configured: a reply of this filter goes back through those after it. */
    private readonly index: number,
  ) {}

  get rq(): RequestView {
    return this.chain.x.rq;
  }

  get route(): Route | undefined {
    return this.chain.x.route;
  }

  get clusterName(): string | undefined {
    return this.chain.x.clusterName;
  }

  get connection(): ConnectionView {
    return (this.chain.connection ??= connectionView(this.chain.x.req, this.chain.x.client));
  }

  reply(status: number, headers: MutableHeaders, body = ''): void {
    const { req, res, reply } = this.chain.x;
    // An HTTP/1 request whose body has not all arrived cannot leave the connection usable: it closes after the reply, as Envoy's does.
    if (req.httpVersionMajor === 1 && !req.complete && requestHasBody(req)) res.shouldKeepAlive = false;
    sendLocalReply(res, status, body, { ...reply, extraHeaders: { ...reply.extraHeaders, ...headers }, encode: encodeThrough([...this.chain.seen.slice(0, this.position), ...filtersAfter(this.chain, this.index)]) });
  }

  flag(bit: number, details?: string): void {
    const record = this.chain.x.record;
    if (!record) return;
    record.responseFlags |= bit;
    if (details !== undefined) record.responseCodeDetails = details;
  }

  finished(done: () => void): void {
    this.chain.x.res.once('close', done);
  }

  markHealthCheck(): void {
    const x = this.chain.x;
    if (x.record) x.record.healthCheck = true;
    x.healthCheck?.();
  }

  entry(): AccessLogEntry {
    const x = this.chain.x;
    return x.record ?? requestEntry(x.req, x.rq, x.client);
  }

  readBody(limit: number): Promise<Buffer | undefined | 'too_large' | 'aborted'> {
    return readWholeBody(this.chain.x, limit);
  }

  hasBody(): boolean {
    return requestHasBody(this.chain.x.req);
  }

  replaceBody(body: Buffer): void {
    const x = this.chain.x;
    if (x.body === undefined) throw new Error('the request body has not been read');
    x.body = body;
    x.rq.headers['content-length'] = String(body.length);
  }

  metadata(): Record<string, Record<string, unknown>> {
    const x = this.chain.x;
    if (!x.metadata) {
      x.metadata = {};
      if (x.record) x.record.dynamicMetadata = x.metadata;
    }
    return x.metadata;
  }

  transformRequestBody(transform: Transform, bytesIn?: (n: number) => void): void {
    const x = this.chain.x;
    const source = x.bodyStream ?? x.req;
    if (bytesIn) source.on('data', (chunk: Buffer) => bytesIn(chunk.length));
    source.on('error', (err) => transform.destroy(err));
    x.bodyStream = source.pipe(transform);
    delete x.rq.headers['content-length'];
  }

  transformBody(transform: Transform, bytesIn?: (n: number) => void): void {
    this.responseBody().add(transform, bytesIn);
  }

  foldResponseIntoHeaders(limit: number, fold: (status: number, headers: MutableHeaders, body: Buffer) => void): void {
    this.responseBody().foldIntoHeaders(limit, fold);
  }

  capturedBodies(): { request: BodyCapture; response: BodyCapture } | undefined {
    const record = this.chain.x.record;
    return record?.requestBody && record.responseBody ? { request: record.requestBody, response: record.responseBody } : undefined;
  }

  private responseBody(): ResponseBodyPipeline {
    const x = this.chain.x;
    return (x.responseBody ??= new ResponseBodyPipeline(x.res));
  }
}

/**
 * The request body read whole, once for all the filters (a later call with a larger limit gets
 * what was read): undefined for a request without one. A body read whole goes upstream with its
 * length as content-length.
 */
function readWholeBody(x: FilterExchange, limit: number): Promise<Buffer | undefined | 'too_large' | 'aborted'> {
  if (x.body !== undefined) return Promise.resolve(x.body.length > limit ? 'too_large' : x.body);
  if (!requestHasBody(x.req)) return Promise.resolve(undefined);
  // A transformed body's length is not the declared one.
  const source = x.bodyStream ?? x.req;
  return (x.reading ??= readBodyUpTo(source, limit, x.bodyStream ? undefined : x.req.headers['content-length']).then((body) => {
    if (typeof body !== 'string') {
      x.body = body;
      x.rq.headers['content-length'] = String(body.length);
      delete x.rq.headers['transfer-encoding'];
    }
    return body;
  }));
}

function peerAddress(req: DownstreamRequest): string {
  const a = req.socket.remoteAddress ?? '';
  return a.startsWith('::ffff:') ? a.slice(7) : a;
}

function pemOf(der: Buffer): string {
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n?$/, '\n')}-----END CERTIFICATE-----\n`;
}

/** The request's connection as filters see it, with the client's address the connection manager found. */
function connectionView(req: DownstreamRequest, client: ClientAddress): ConnectionView {
  const socket = req.socket as TLSSocket;
  const direct = peerAddress(req);
  // An HTTP/2 stream's socket is its session's proxy: the session is what its streams share.
  const session = (req as unknown as { stream?: { session?: object } }).stream?.session;
  const local = localOf(socket);
  return {
    key: session ?? req.socket,
    directRemoteIp: direct,
    directRemotePort: socket.remotePort ?? 0,
    remoteIp: client.ip ?? direct,
    remotePort: client.ip === undefined ? (socket.remotePort ?? 0) : client.port,
    localIp: local.ip,
    localPort: local.port,
    serverName: typeof socket.servername === 'string' ? socket.servername : undefined,
    tls: socket.encrypted === true,
    protocol: req.httpVersionMajor === 2 ? 'HTTP/2' : `HTTP/${req.httpVersion}`,
    peer: () => {
      const cert = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
      if (!cert || Object.keys(cert).length === 0) return undefined;
      const sans = (cert.subjectaltname ?? '').split(',').map((s) => s.trim());
      const subject = Object.entries(cert.subject ?? {}).map(([k, v]) => `${k}=${String(v)}`).join(',');
      return { uriSans: sans.filter((s) => s.startsWith('URI:')).map((s) => s.slice(4)), dnsSans: sans.filter((s) => s.startsWith('DNS:')).map((s) => s.slice(4)), subject, pem: () => pemOf(cert.raw) };
    },
  };
}

