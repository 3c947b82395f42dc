import { setServer, type ServerHeader } from './server-header.js';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import { logEncodingHeaders, logLocalReply } from './stream-log.js';
import type { AccessLogEntry } from '../../shared/access-log/entry.js';
import { compileAccessLogFilter, type AccessLogFilter } from '../../shared/access-log/filter.js';
import { compileSubstitutionFormat, type LogFormatter } from '../../shared/access-log/format.js';
import { list, obj } from '../../shared/config/access.js';
import { readDataSource } from '../../shared/config/data-source.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { encodeGrpcMessage, httpToGrpcStatus } from '../../shared/http/grpc.js';
import { applyHeadersToAdd, compileHeadersToAdd, type HeaderToAdd, type MutableHeaders } from '../../shared/header-mutation.js';

/**
 * Responses the proxy makes itself, with Envoy's status codes and bodies, so that clients and
 * dashboards that know Envoy's failures recognise these.
 */
export const LocalReply = {
  noRoute: { status: 404, body: '' },
  noHealthyUpstream: { status: 503, body: 'no healthy upstream' },
  connectionTermination: { status: 503, body: 'upstream connect error or disconnect/reset before headers. reset reason: connection termination' },
  upstreamTimeout: { status: 504, body: 'upstream request timeout' },
  /** The cluster's max_stream_duration: 504 once the client's request was whole, else 408 (as Envoy's maybeRequestTimeoutCode). */
  upstreamMaxStreamDuration: { status: 504, body: 'upstream max stream duration reached' },
  upstreamMaxStreamDurationIncomplete: { status: 408, body: 'upstream max stream duration reached' },
  overflow: { status: 503, body: 'upstream connect error or disconnect/reset before headers. reset reason: overflow' },
  streamIdleTimeout: { status: 408, body: 'stream timeout' },
  tooManyHeaders: { status: 431, body: '' },
} as const;

/** What a local reply becomes after the connection manager's local_reply_config. */
export interface RewrittenReply {
  status: number;
  body: string;
  contentType?: string;
  headers: MutableHeaders;
}

export interface LocalReplyContext {
  server: ServerHeader;
  /** Headers to add (e.g. x-envoy-immediate-health-check-fail, or a route's response_headers_to_add). */
  extraHeaders?: MutableHeaders;
  /** The connection manager's local_reply_config, for this request. */
  rewrite?: (status: number, body: string) => RewrittenReply;
  /** The HTTP filters' view of the response headers (shared/extensions/filters/http/), last before they are written. */
  encode?: (status: number, headers: MutableHeaders) => void;
  /** The HTTP filters' view of the upstream's trailers (set with `encode`, when a filter has one). */
  encodeTrailers?: (trailers: MutableHeaders) => void;
  /** The request is gRPC (isGrpcContentType): its local replies are gRPC replies. */
  grpc?: boolean;
  /** The exchange's record, when it keeps one: the debug log's details of a local reply. */
  record?: { readonly responseCodeDetails?: string | undefined };
}

export function sendLocalReply(res: DownstreamResponse, status: number, body: string | Buffer, ctx: LocalReplyContext, contentType = 'text/plain'): void {
  if (res.headersSent) {
    // Too late for a status: the client sees the stream cut, as Envoy resets it.
    res.destroy();
    return;
  }
  let headers: MutableHeaders = { ...ctx.extraHeaders };
  if (ctx.rewrite) {
    const rewritten = ctx.rewrite(status, typeof body === 'string' ? body : body.toString('latin1'));
    ({ status, body } = rewritten);
    headers = { ...headers, ...rewritten.headers };
    if (rewritten.contentType) contentType = rewritten.contentType;
  }
  if (ctx.grpc) {
    // As Envoy answers a gRPC client: 200 with the status (and the text as grpc-message) in headers only.
    headers['content-type'] = 'application/grpc';
    headers['grpc-status'] ??= String(httpToGrpcStatus(status));
    if (body.length > 0 && headers['grpc-message'] === undefined) headers['grpc-message'] = encodeGrpcMessage(typeof body === 'string' ? body : body.toString());
    status = 200;
    body = '';
  }
  headers['content-length'] = Buffer.byteLength(body);
  if (Buffer.byteLength(body) > 0) headers['content-type'] ??= contentType;
  // The filters see the reply as it stands (a compressor may take its length away).
  ctx.encode?.(status, headers);
  setServer(headers, ctx.server);
  const req = (res as { req?: DownstreamRequest }).req;
  logLocalReply(req, ctx.record?.responseCodeDetails);
  logEncodingHeaders(req, status, headers, Buffer.byteLength(body) === 0);
  if (Buffer.byteLength(body) > 0) {
    res.writeHead(status, headers as Record<string, string | string[] | number>);
    res.end(body);
    return;
  }
  // Without a body the head is the whole answer: on HTTP/2 one HEADERS frame that ends the
  // stream (a gRPC client takes only that as a trailers-only reply), not HEADERS and an empty DATA.
  res.statusCode = status;
  for (const k in headers) res.setHeader(k, headers[k]!);
  res.end();
}

interface BodyFormat {
  formatter: LogFormatter;
  contentType: string;
}

interface Mapper {
  filter: AccessLogFilter;
  status: number | undefined;
  body: string | undefined;
  headers: HeaderToAdd[];
  format: BodyFormat | undefined;
}

function bodyFormat(sfs: unknown): BodyFormat | undefined {
  if (sfs === undefined) return undefined;
  const config = obj(sfs);
  const json = config.json_format !== undefined;
  return { formatter: compileSubstitutionFormat(config), contentType: typeof config.content_type === 'string' && config.content_type ? config.content_type : json ? 'application/json' : 'text/plain' };
}

/**
 * HttpConnectionManager.local_reply_config, as Envoy applies it to every reply the proxy makes
 * itself (no route, no healthy upstream, timeouts, direct responses, …): the first mapper whose
 * access-log filter matches sets the body, adds headers (formatted with the original status),
 * rewrites the status, and formats the body by its body_format_override, else the config's
 * body_format (formatted with the new status; `%LOCAL_REPLY_BODY%` is the body so far).
 */
export class LocalReplyConfig {
  private readonly mappers: Mapper[];
  private readonly format: BodyFormat | undefined;

  constructor(config: JsonObject) {
    this.mappers = list(config.mappers).map((m) => ({
      filter: compileAccessLogFilter(obj(m.filter)),
      status: typeof m.status_code === 'number' ? m.status_code : undefined,
      body: m.body !== undefined ? (readDataSource(obj(m.body))?.toString() ?? '') : undefined,
      headers: compileHeadersToAdd(m.headers_to_add),
      format: bodyFormat(m.body_format_override),
    }));
    this.format = bodyFormat(config.body_format);
  }

  rewrite(entry: AccessLogEntry, status: number, body: string): RewrittenReply {
    const seen = (code: number, text: string): AccessLogEntry => Object.create(entry, { responseCode: { value: code }, localReplyBody: { value: text } }) as AccessLogEntry;
    const headers: MutableHeaders = {};
    const mapper = this.mappers.find((m) => m.filter(seen(status, body)));
    if (mapper) {
      if (mapper.body !== undefined) body = mapper.body;
      applyHeadersToAdd(headers, mapper.headers, seen(status, body));
      if (mapper.status !== undefined) status = mapper.status;
    }
    const format = mapper?.format ?? this.format;
    if (!format) return { status, body, headers };
    return { status, body: format.formatter.format(seen(status, body)), contentType: format.contentType, headers };
  }
}
