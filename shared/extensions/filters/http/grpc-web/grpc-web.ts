import { Transform, type TransformCallback } from 'node:stream';
import type { MutableHeaders } from '../../../../header-mutation.js';
import { requestHeader } from '../../../../matchers.js';
import { stats } from '../../../../stats/process.js';
import { encodeGrpcMessage, grpcServiceAndMethod, httpToGrpcStatus, isGrpcContentType } from '../../../../http/grpc.js';
import type { FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';

/**
 * envoy.filters.http.grpc_web, as Envoy's: a gRPC-Web request (a browser's, over HTTP/1.1 or
 * HTTP/2) goes upstream as gRPC, and its gRPC response comes back as gRPC-Web.
 *
 * - Request: `application/grpc-web[+proto]` and `application/grpc-web-text[+proto]` (base64)
 *   become `application/grpc` with `te: trailers` and a `grpc-accept-encoding`. A text body is decoded whole before it goes upstream (gRPC-Web has no client
 *   streaming, so a request is one message), up to gRPC's default 4 MiB message limit; bad base64
 *   is answered 400 as Envoy answers it.
 * - Response: `application/grpc-web+proto` (or `-text+proto` when the client's `accept` asks),
 *   the gRPC trailers sent as gRPC-Web's trailer frame at the end of the body, and in text mode
 *   each frame base64-encoded. A response that is not gRPC (a 503 from the proxy, an HTML error
 *   page) gets a `grpc-status` from its HTTP status and its body (up to 16 KiB) as `grpc-message`.
 * - Stats, as Envoy's gRPC context counts them on the route's cluster:
 *   `cluster.<c>.grpc-web.<service>.<method>.{<grpc-status>,success,failure,total}`.
 */

const WEB_TYPES = new Set(['application/grpc-web', 'application/grpc-web+proto', 'application/grpc-web-text', 'application/grpc-web-text+proto']);
const TEXT_TYPES = new Set(['application/grpc-web-text', 'application/grpc-web-text+proto']);
const TRAILER_FRAME = 0x80;
/** gRPC's default maximum message size: a text request larger than this is refused (413). */
const TEXT_REQUEST_LIMIT = 4 * 1024 * 1024;
/** How much of a non-gRPC response body becomes its grpc-message (Envoy's limit). */
const MESSAGE_LIMIT = 16 * 1024;
const BASE64 = /^(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)*$/;

class GrpcWebFilter implements HttpFilter {
  private request: FilterRequest | undefined;
  private textResponse = false;
  private notGrpc = false;
  /** The trailer frame, once the trailers came: the body's last bytes. */
  private trailerFrame: Buffer | undefined;
  /** The stat prefix `cluster.<c>.grpc-web.<service>.<method>.`, when the route has a cluster and the path names a method. */
  private statPrefix: string | undefined;

  decodeHeaders(request: FilterRequest): FilterDecision | Promise<FilterDecision> {
    const headers = request.rq.headers as MutableHeaders;
    const contentType = requestHeader(request.rq, 'content-type');
    if (contentType === undefined || !WEB_TYPES.has(contentType)) return 'continue';
    this.request = request;
    const names = grpcServiceAndMethod(request.rq.path);
    if (names && request.clusterName !== undefined) this.statPrefix = `cluster.${request.clusterName}.grpc-web.${names.service}.${names.method}.`;
    const accept = requestHeader(request.rq, 'accept');
    this.textResponse = accept !== undefined && TEXT_TYPES.has(accept);
    headers['content-type'] = 'application/grpc';
    headers.te = 'trailers';
    headers['grpc-accept-encoding'] ??= 'identity,deflate,gzip';
    // A binary body goes on as it came, with its length (Envoy drops the length; it is right as it stands).
    if (!TEXT_TYPES.has(contentType) || !request.hasBody()) return 'continue';
    return request.readBody(TEXT_REQUEST_LIMIT).then((body) => {
      if (body === 'aborted') return 'stop';
      if (body === 'too_large') return this.refuse(request, 413, 'Payload Too Large', 'request_payload_too_large');
      if (body === undefined || body.length === 0) return 'continue';
      const text = body.toString('latin1');
      if (text.length % 4 !== 0) return this.refuse(request, 400, 'Bad gRPC-web request, invalid base64 data.', 'grpc_base_64_decode_failed_bad_size');
      if (!BASE64.test(text)) return this.refuse(request, 400, 'Bad gRPC-web request, invalid base64 data.', 'grpc_base_64_decode_failed');
      request.replaceBody(decodeBase64Segments(text));
      return 'continue';
    });
  }

  /** This filter's own answer, already in the gRPC-Web form its response path would give it. */
  private refuse(request: FilterRequest, status: number, message: string, details: string): 'stop' {
    request.flag(0, details);
    request.reply(status, { 'content-type': this.responseType(), 'grpc-status': String(httpToGrpcStatus(status)), 'grpc-message': encodeGrpcMessage(message) });
    return 'stop';
  }

  private responseType(): string {
    return this.textResponse ? 'application/grpc-web-text+proto' : 'application/grpc-web+proto';
  }

  encodeHeaders(status: number, headers: MutableHeaders): void {
    const request = this.request;
    if (!request) return;
    this.charge(headers['grpc-status']);
    const contentType = typeof headers['content-type'] === 'string' ? headers['content-type'] : undefined;
    // gRPC: a trailers-only answer (its status in the headers), or a 200 of gRPC's content type; or already gRPC-Web.
    const grpc = headers['grpc-status'] !== undefined || (status === 200 && (isGrpcContentType(contentType) || isGrpcWebProto(contentType)));
    delete headers['content-length'];
    headers['content-type'] = this.responseType();
    if (!grpc) {
      this.notGrpc = true;
      request.foldResponseIntoHeaders(MESSAGE_LIMIT, (code, h, body) => {
        h['content-length'] = '0';
        if (body.length === 0) return;
        h['grpc-status'] = String(httpToGrpcStatus(code));
        h['grpc-message'] = encodeGrpcMessage(body.toString('utf8'));
      });
      return;
    }
    request.transformBody(this.textResponse ? new TextFrames(() => this.trailerFrame) : new TrailerFrame(() => this.trailerFrame));
  }

  encodeTrailers(trailers: MutableHeaders): void {
    if (!this.request) return;
    this.charge(trailers['grpc-status']);
    if (this.notGrpc) return;
    // The trailers go in the body, as one frame of `name:value\r\n` lines; none go on as trailers.
    let text = '';
    for (const k of Object.keys(trailers)) {
      const v = trailers[k];
      for (const item of Array.isArray(v) ? v : [v]) text += `${k}:${String(item)}\r\n`;
      delete trailers[k];
    }
    const payload = Buffer.from(text, 'latin1');
    const frame = Buffer.allocUnsafe(5 + payload.length);
    frame[0] = TRAILER_FRAME;
    frame.writeUInt32BE(payload.length, 1);
    payload.copy(frame, 5);
    this.trailerFrame = frame;
  }

  private charge(grpcStatus: unknown): void {
    const prefix = this.statPrefix;
    if (prefix === undefined || grpcStatus === undefined) return;
    const code = String(Array.isArray(grpcStatus) ? grpcStatus[0] : grpcStatus);
    stats.counter(prefix + code).inc();
    stats.counter(prefix + (code === '0' ? 'success' : 'failure')).inc();
    stats.counter(`${prefix}total`).inc();
  }
}

function isGrpcWebProto(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/grpc-web' || type === 'application/grpc-web+proto';
}

/** A body of padded base64 segments (a client may send several), decoded. */
function decodeBase64Segments(text: string): Buffer {
  const segments = text.split(/(?<==)(?=[^=])/);
  return segments.length === 1 ? Buffer.from(text, 'base64') : Buffer.concat(segments.map((s) => Buffer.from(s, 'base64')));
}

/** The binary response: the body as it comes, then the trailer frame. */
class TrailerFrame extends Transform {
  constructor(private readonly trailers: () => Buffer | undefined) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    callback(null, this.trailers());
  }
}

/** The text response: each gRPC frame base64-encoded on its own (as Envoy does), then the trailer frame. */
class TextFrames extends Transform {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly trailers: () => Buffer | undefined) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let data = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    let out = '';
    while (data.length >= 5) {
      const size = 5 + data.readUInt32BE(1);
      if (data.length < size) break;
      out += data.subarray(0, size).toString('base64');
      data = data.subarray(size);
    }
    this.pending = data;
    callback(null, out.length ? Buffer.from(out, 'latin1') : undefined);
  }

  override _flush(callback: TransformCallback): void {
    // An incomplete last frame goes as it is (the client reports it); then the trailers.
    const rest = this.pending.length ? this.pending.toString('base64') : '';
    const trailers = this.trailers();
    callback(null, rest || trailers ? Buffer.from(rest + (trailers ? trailers.toString('base64') : ''), 'latin1') : undefined);
  }
}

export function grpcWebFactory(name: string): HttpFilterFactory {
  return { name, create: () => new GrpcWebFilter() };
}
