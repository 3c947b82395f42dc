import type { Transform } from 'node:stream';
import { zlibModule } from '../../../shared/builtins.js';
import { obj } from '../../../shared/config/access.js';
import type { JsonObject } from '../../../shared/config/proto-json.js';
import { typeNameOfUrl } from '../../../shared/config/wkt.js';
import type { MutableHeaders } from '../../../shared/header-mutation.js';
import { requestHeader } from '../../../shared/matchers.js';
import { runtimeFeature } from '../../../shared/runtime.js';
import { stats } from '../../../shared/stats/process.js';
import type { Counter } from '../../../shared/stats/store.js';
import type { FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from './http-filter.js';

/**
 * envoy.filters.http.compressor, responses only, as Envoy's: a response is compressed with the
 * filter's library (gzip or brotli, with Node's zlib) when the request accepts that encoding
 * (Accept-Encoding, `*` too, q above 0), the response has no Content-Encoding, a content type of
 * the list (Envoy's default list when none), a length of at least `min_content_length` (30) when
 * it says one, no `Cache-Control: no-transform`, and a body (not HEAD, 204 or 304). Then
 * Content-Length goes, Content-Encoding and `Vary: Accept-Encoding` come, and a strong ETag turns
 * weak (or, with `disable_on_etag_header`, the response is left alone). A route's
 * CompressorPerRoute can switch it off. Counted in
 * http.<prefix>.compressor.<library name>.<encoding>.{compressed,not_compressed,…}.
 */

const DEFAULT_TYPES = [
  'text/html', 'text/plain', 'text/css', 'application/javascript', 'application/x-javascript', 'text/javascript', 'text/x-javascript', 'text/ecmascript',
  'text/js', 'text/jscript', 'text/x-js', 'application/ecmascript', 'application/x-json', 'application/xml', 'application/json', 'image/svg+xml',
  'text/xml', 'application/xhtml+xml',
];
const BROTLI = 'envoy.extensions.compression.brotli.compressor.v3.Brotli';

interface Library {
  encoding: 'gzip' | 'br';
  create(): Transform;
}

function libraryOf(config: JsonObject): Library {
  const { constants, createBrotliCompress, createGzip } = zlibModule();
  const typed = obj(config.typed_config);
  const c = typed;
  if (typeNameOfUrl(String(typed['@type'])) === BROTLI) {
    const params: Record<number, number> = {
      [constants.BROTLI_PARAM_QUALITY]: typeof c.quality === 'number' ? c.quality : 3,
      [constants.BROTLI_PARAM_LGWIN]: typeof c.window_bits === 'number' ? c.window_bits : 18,
      [constants.BROTLI_PARAM_MODE]: c.encoder_mode === 'TEXT' ? constants.BROTLI_MODE_TEXT : c.encoder_mode === 'FONT' ? constants.BROTLI_MODE_FONT : constants.BROTLI_MODE_GENERIC,
    };
    if (typeof c.input_block_bits === 'number') params[constants.BROTLI_PARAM_LGBLOCK] = c.input_block_bits;
    if (c.disable_literal_context_modeling === true) params[constants.BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING] = 1;
    const chunkSize = typeof c.chunk_size === 'number' ? c.chunk_size : 4096;
    return { encoding: 'br', create: () => createBrotliCompress({ params, chunkSize }) };
  }
  const LEVELS: Record<string, number> = { DEFAULT_COMPRESSION: constants.Z_DEFAULT_COMPRESSION, BEST_SPEED: 1, BEST_COMPRESSION: 9 };
  const level = typeof c.compression_level === 'string' ? (LEVELS[c.compression_level] ?? Number(c.compression_level.replace('COMPRESSION_LEVEL_', ''))) : constants.Z_DEFAULT_COMPRESSION;
  const STRATEGIES: Record<string, number> = { DEFAULT_STRATEGY: constants.Z_DEFAULT_STRATEGY, FILTERED: constants.Z_FILTERED, HUFFMAN_ONLY: constants.Z_HUFFMAN_ONLY, RLE: constants.Z_RLE, FIXED: constants.Z_FIXED };
  const options = {
    level,
    memLevel: typeof c.memory_level === 'number' ? c.memory_level : 5,
    windowBits: typeof c.window_bits === 'number' ? c.window_bits : 12,
    strategy: STRATEGIES[String(c.compression_strategy ?? 'DEFAULT_STRATEGY')] ?? constants.Z_DEFAULT_STRATEGY,
    chunkSize: typeof c.chunk_size === 'number' ? c.chunk_size : 4096,
  };
  return { encoding: 'gzip', create: () => createGzip(options) };
}

/** Whether Accept-Encoding takes `encoding`: named with q > 0, or `*` with q > 0 and it not refused by name. */
export function accepts(header: string, encoding: string): 'yes' | 'wildcard' | 'no' | 'identity' {
  let wildcard: number | undefined;
  let named: number | undefined;
  let identityOnly = true;
  for (const part of header.split(',')) {
    const [token, ...params] = part.trim().split(';');
    const name = token!.trim().toLowerCase();
    if (!name) continue;
    const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined);
    const weight = q === undefined ? 1 : Number(q);
    if (name !== 'identity') identityOnly = false;
    if (name === encoding) named = weight;
    else if (name === '*') wildcard = weight;
  }
  if (named !== undefined) return named > 0 ? 'yes' : 'no';
  if (wildcard !== undefined) return wildcard > 0 ? 'wildcard' : 'no';
  return identityOnly ? 'identity' : 'no';
}

interface Counters {
  compressed: Counter;
  notCompressed: Counter;
  noAcceptHeader: Counter;
  headerIdentity: Counter;
  headerWildcard: Counter;
  headerNotValid: Counter;
  tooSmall: Counter;
  uncompressedBytes: Counter;
  compressedBytes: Counter;
}

interface Settings {
  library: Library;
  enabled: () => boolean;
  minLength: number;
  types: Set<string>;
  disableOnEtag: boolean;
  removeAcceptEncoding: boolean;
}

class CompressorFilter implements HttpFilter {
  private request: FilterRequest | undefined;
  private accepted: boolean = false;

  constructor(
    private readonly s: Settings,
    private readonly counters: Counters,
  ) {}

  decodeHeaders(request: FilterRequest): FilterDecision {
    const perRoute = request.perRoute[0];
    if (perRoute?.disabled === true) return 'continue';
    if (!this.s.enabled()) return 'continue';
    const header = requestHeader(request.rq, 'accept-encoding');
    const removeHeader = obj(obj(obj(perRoute).overrides).response_direction_config).remove_accept_encoding_header ?? this.s.removeAcceptEncoding;
    if (removeHeader === true) delete request.rq.headers['accept-encoding'];
    if (header === undefined) {
      this.counters.noAcceptHeader.inc();
      return 'continue';
    }
    const verdict = accepts(header, this.s.library.encoding);
    if (verdict === 'identity') this.counters.headerIdentity.inc();
    else if (verdict === 'wildcard') this.counters.headerWildcard.inc();
    else if (verdict === 'no') this.counters.headerNotValid.inc();
    this.accepted = verdict === 'yes' || verdict === 'wildcard';
    if (this.accepted && request.rq.method !== 'HEAD') this.request = request;
    return 'continue';
  }

  encodeHeaders(status: number, headers: MutableHeaders): void {
    const request = this.request;
    if (!request) return;
    if (!this.compressible(status, headers)) {
      this.counters.notCompressed.inc();
      return;
    }
    const etag = headers.etag;
    if (typeof etag === 'string' && etag && !etag.startsWith('W/')) {
      if (this.s.disableOnEtag) {
        this.counters.notCompressed.inc();
        return;
      }
      headers.etag = `W/${etag}`;
    }
    delete headers['content-length'];
    headers['content-encoding'] = this.s.library.encoding;
    const vary = headers.vary;
    const varies = typeof vary === 'string' ? vary : Array.isArray(vary) ? vary.join(', ') : '';
    if (!/(^|,)\s*accept-encoding\s*(,|$)/i.test(varies)) headers.vary = varies ? `${varies}, Accept-Encoding` : 'Accept-Encoding';
    this.counters.compressed.inc();
    const transform = this.s.library.create();
    transform.on('data', (d: Buffer) => this.counters.compressedBytes.inc(d.length));
    request.transformBody(transform, (n) => this.counters.uncompressedBytes.inc(n));
  }

  private compressible(status: number, headers: MutableHeaders): boolean {
    if (status === 204 || status === 304 || status < 200) return false;
    if (headers['content-encoding'] !== undefined) return false;
    const cacheControl = headers['cache-control'];
    if (typeof cacheControl === 'string' && /(^|,)\s*no-transform\s*(,|$)/i.test(cacheControl)) return false;
    const type = String(headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!this.s.types.has(type)) return false;
    const length = headers['content-length'];
    if (length !== undefined && Number(length) < this.s.minLength) {
      this.counters.tooSmall.inc();
      return false;
    }
    return true;
  }
}

export function compressorFactory(name: string, config: JsonObject, statPrefix: string): HttpFilterFactory {
  const library = obj(config.compressor_library);
  const response = obj(config.response_direction_config);
  const common = obj(response.common_config);
  const flag = obj(common.enabled);
  const types = (common.content_type as string[] | undefined) ?? [];
  const s: Settings = {
    library: libraryOf(library),
    enabled: flag.runtime_key !== undefined ? () => runtimeFeature(String(flag.runtime_key), flag.default_value !== false) : () => flag.default_value !== false,
    minLength: typeof common.min_content_length === 'number' ? common.min_content_length : 30,
    types: new Set((types.length ? types : DEFAULT_TYPES).map((t) => t.toLowerCase())),
    disableOnEtag: response.disable_on_etag_header === true,
    removeAcceptEncoding: response.remove_accept_encoding_header === true,
  };
  const prefix = `http.${statPrefix}.compressor.${String(library.name ?? '')}.${s.library.encoding === 'br' ? 'brotli' : 'gzip'}.`;
  const c = (n: string) => stats.counter(prefix + n);
  const counters: Counters = {
    compressed: c('compressed'),
    notCompressed: c('not_compressed'),
    noAcceptHeader: c('no_accept_header'),
    headerIdentity: c('header_identity'),
    headerWildcard: c('header_wildcard'),
    headerNotValid: c('header_not_valid'),
    tooSmall: c('content_length_too_small'),
    uncompressedBytes: c('total_uncompressed_bytes'),
    compressedBytes: c('total_compressed_bytes'),
  };
  return { name, create: () => new CompressorFilter(s, counters) };
}
