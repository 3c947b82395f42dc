import { Transform, type TransformCallback } from 'node:stream';
import { zlibModule } from '../../../../builtins.js';
import { obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { typeNameOfUrl } from '../../../../config/wkt.js';
import type { MutableHeaders } from '../../../../header-mutation.js';
import { requestHeader } from '../../../../matchers.js';
import { runtimeFeature } from '../../../../runtime.js';
import { stats } from '../../../../stats/process.js';
import type { Counter } from '../../../../stats/store.js';
import type { FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';

/**
 * envoy.filters.http.decompressor, as Envoy's, with `envoy.compression.gzip.decompressor` or
 * `envoy.compression.brotli.decompressor` (Node's zlib): a request or response body whose
 * Content-Encoding starts with the library's encoding is decompressed on its way through, that
 * encoding taken off the header and Content-Length removed (unless `Cache-Control: no-transform`,
 * or the direction is switched off). With response decompression on, the request advertises the
 * encoding in Accept-Encoding (`advertise_accept_encoding`, on by default). Gzip output beyond
 * `max_inflate_ratio` (100) times the input is refused as a zip bomb. Counted in
 * http.<prefix>.decompressor.<library name>.<gzip|brotli>.<request|response>.{decompressed,
 * not_decompressed,total_compressed_bytes,total_uncompressed_bytes}.
 */

const BROTLI = 'envoy.extensions.compression.brotli.decompressor.v3.Brotli';

interface Library {
  encoding: 'gzip' | 'br';
  statName: 'gzip' | 'brotli';
  create(): Transform;
}

function libraryOf(config: JsonObject): Library {
  const { constants, createBrotliDecompress, createGunzip } = zlibModule();
  const c = obj(config.typed_config);
  const chunkSize = typeof c.chunk_size === 'number' ? c.chunk_size : 4096;
  if (typeNameOfUrl(String(c['@type'])) === BROTLI) {
    const params = c.disable_ring_buffer_reallocation === true ? { [constants.BROTLI_DECODER_PARAM_DISABLE_RING_BUFFER_REALLOCATION]: 1 } : {};
    return { encoding: 'br', statName: 'brotli', create: () => createBrotliDecompress({ chunkSize, params }) };
  }
  const windowBits = typeof c.window_bits === 'number' ? c.window_bits : 15;
  const ratio = typeof c.max_inflate_ratio === 'number' ? c.max_inflate_ratio : 100;
  return { encoding: 'gzip', statName: 'gzip', create: () => bounded(createGunzip({ chunkSize, windowBits }), ratio) };
}

/** A decompressor that fails once its output passes `ratio` times its input. */
function bounded(inner: Transform, ratio: number): Transform {
  let inBytes = 0;
  let outBytes = 0;
  const outer = new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      inBytes += chunk.length;
      inner.write(chunk, done);
    },
    flush(done: TransformCallback) {
      inner.end(() => done());
    },
  });
  inner.on('data', (d: Buffer) => {
    outBytes += d.length;
    if (outBytes > inBytes * ratio) {
      outer.destroy(new Error(`decompressed data is more than ${ratio} times the compressed (max_inflate_ratio)`));
      inner.destroy();
      return;
    }
    outer.push(d);
  });
  inner.on('error', (err) => outer.destroy(err));
  return outer;
}

interface DirectionCounters {
  decompressed: Counter;
  notDecompressed: Counter;
  compressedBytes: Counter;
  uncompressedBytes: Counter;
}

interface Direction {
  enabled: () => boolean;
  ignoreNoTransform: boolean;
  counters: DirectionCounters;
}

interface Settings {
  library: Library;
  request: Direction;
  response: Direction;
  advertise: boolean;
}

/** Whether a Content-Encoding's first coding is the library's (any case, any spacing). */
function firstCodingIs(value: string | undefined, encoding: string): boolean {
  return value !== undefined && value.split(',')[0]!.trim().toLowerCase() === encoding;
}

/** The Content-Encoding with its first coding taken off (undefined when none is left). */
function withoutFirstCoding(value: string): string | undefined {
  const comma = value.indexOf(',');
  return comma < 0 ? undefined : value.slice(comma + 1).trim() || undefined;
}

/**
 * Envoy's HeaderUtility::addEncodingToAcceptEncoding: the header's codings without `encoding` (with
 * whatever q-value it had), then `encoding` last, with no q-value: this hop takes it first.
 */
export function addEncodingToAcceptEncoding(header: string, encoding: string): string {
  const others = header
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '' && t.split(';')[0]!.trim() !== encoding);
  return [...others, encoding].join(',');
}

function noTransform(cacheControl: unknown): boolean {
  return typeof cacheControl === 'string' && /(^|,)\s*no-transform\s*(,|$)/i.test(cacheControl);
}

/** Counts a body going through `transform`: what goes in is compressed, what comes out is not. */
function counted(transform: Transform, counters: DirectionCounters): Transform {
  transform.on('data', (d: Buffer) => counters.uncompressedBytes.inc(d.length));
  return transform;
}

/**
 * A stage that counts what passes through it. A request body is read later (by the router, or
 * a filter after this one): a 'data' listener on the decompressor would start the flow now, and
 * the body would be lost before anyone reads it.
 */
function counter(count: Counter): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      count.inc(chunk.length);
      done(null, chunk);
    },
  });
}

class DecompressorFilter implements HttpFilter {
  private request: FilterRequest | undefined;

  constructor(private readonly s: Settings) {}

  decodeHeaders(request: FilterRequest): FilterDecision {
    const { s } = this;
    const headers = request.rq.headers as MutableHeaders;
    if (s.response.enabled() && s.advertise) headers['accept-encoding'] = addEncodingToAcceptEncoding(requestHeader(request.rq, 'accept-encoding') ?? '', s.library.encoding);
    if (request.rq.method !== 'HEAD') this.request = request;
    if (!request.hasBody()) return 'continue';
    const direction = s.request;
    const encoding = requestHeader(request.rq, 'content-encoding');
    if (!direction.enabled() || (noTransform(headers['cache-control']) && !direction.ignoreNoTransform) || !firstCodingIs(encoding, s.library.encoding)) {
      direction.counters.notDecompressed.inc();
      return 'continue';
    }
    direction.counters.decompressed.inc();
    const rest = withoutFirstCoding(encoding!);
    if (rest === undefined) delete headers['content-encoding'];
    else headers['content-encoding'] = rest;
    request.transformRequestBody(s.library.create(), (n) => direction.counters.compressedBytes.inc(n));
    request.transformRequestBody(counter(direction.counters.uncompressedBytes));
    return 'continue';
  }

  encodeHeaders(status: number, headers: MutableHeaders): void {
    const request = this.request;
    // A response without a body (HEAD, 1xx, 204, 304, an empty one) is left alone.
    if (!request || status < 200 || status === 204 || status === 304 || String(headers['content-length']) === '0') return;
    const direction = this.s.response;
    const encoding = headers['content-encoding'];
    const value = Array.isArray(encoding) ? encoding.join(',') : encoding === undefined ? undefined : String(encoding);
    if (!direction.enabled() || (noTransform(headers['cache-control']) && !direction.ignoreNoTransform) || !firstCodingIs(value, this.s.library.encoding)) {
      direction.counters.notDecompressed.inc();
      return;
    }
    direction.counters.decompressed.inc();
    const rest = withoutFirstCoding(value!);
    if (rest === undefined) delete headers['content-encoding'];
    else headers['content-encoding'] = rest;
    delete headers['content-length'];
    // The response is written to the client as it comes out: counting its output is safe here.
    request.transformBody(counted(this.s.library.create(), direction.counters), (n) => direction.counters.compressedBytes.inc(n));
  }
}

function direction(config: unknown, prefix: string): Direction {
  const common = obj(obj(config).common_config);
  const flag = obj(common.enabled);
  const c = (n: string) => stats.counter(prefix + n);
  return {
    enabled: flag.runtime_key !== undefined ? () => runtimeFeature(String(flag.runtime_key), flag.default_value !== false) : () => flag.default_value !== false,
    ignoreNoTransform: common.ignore_no_transform_header === true,
    counters: { decompressed: c('decompressed'), notDecompressed: c('not_decompressed'), compressedBytes: c('total_compressed_bytes'), uncompressedBytes: c('total_uncompressed_bytes') },
  };
}

export function decompressorFactory(name: string, config: JsonObject, statPrefix: string): HttpFilterFactory {
  const library = obj(config.decompressor_library);
  const lib = libraryOf(library);
  const prefix = `http.${statPrefix}.decompressor.${String(library.name ?? '')}.${lib.statName}.`;
  const requestConfig = obj(config.request_direction_config);
  const s: Settings = {
    library: lib,
    request: direction(requestConfig, `${prefix}request.`),
    response: direction(config.response_direction_config, `${prefix}response.`),
    advertise: requestConfig.advertise_accept_encoding !== false,
  };
  return { name, create: () => new DecompressorFilter(s) };
}
