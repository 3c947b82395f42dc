import type { Transform } from 'node:stream';
import { parseDecimal } from '../../../../decimal.js';
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
  'text/xml', 'application/xhtml+xml', 'application/grpc-web', 'application/grpc-web+proto',
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

/** Accept-Encoding's codings with their q-values, as Envoy reads them (a q-value that does not parse drops its coding). */
function acceptedCodings(header: string): { coding: string; q: number }[] {
  const out: { coding: string; q: number }[] = [];
  for (const token of header.split(',')) {
    if (token.trim() === '') continue;
    const semi = token.indexOf(';');
    const coding = (semi < 0 ? token : token.slice(0, semi)).trim().toLowerCase();
    let q = 1;
    if (semi >= 0) {
      const params = token.slice(semi + 1);
      const eq = params.indexOf('=');
      if (eq >= 0 && params.slice(0, eq).trim().toLowerCase() === 'q') {
        const value = params.slice(eq + 1).trim();
        const parsed = parseDecimal(value);
        if (parsed === undefined) continue;
        q = parsed;
      }
    }
    out.push({ coding, q });
  }
  return out;
}

type HeaderStat = 'used' | 'identity' | 'wildcard' | 'not_valid';

/**
 * Envoy's chooseEncoding: the coding of the compressor filters of the request's chain (those whose
 * content types take the response's) that Accept-Encoding weighs highest; `*` picks the first
 * filter's; identity, or nothing acceptable, compresses nothing. Made once per request, shared by
 * its compressor filters.
 */
export function chooseEncoding(acceptEncoding: string, filters: readonly Settings[], contentType: string): { encoding: string; stat: HeaderStat } {
  const allowed = new Map<string, number>();
  for (const f of filters) {
    if (contentType !== '' && !f.types.has(contentType)) continue;
    if (!allowed.has(f.library.encoding)) allowed.set(f.library.encoding, allowed.size);
  }
  const pairs = acceptedCodings(acceptEncoding);
  for (const p of pairs) if (p.q === 0) allowed.delete(p.coding);
  if (pairs.length === 0 || allowed.size === 0) return { encoding: 'identity', stat: 'not_valid' };
  let choice = { coding: 'identity', q: 0 };
  for (const p of pairs) {
    if (allowed.has(p.coding) || p.coding === 'identity' || p.coding === '*') {
      if (p.q > choice.q) choice = p;
    }
  }
  if (choice.q === 0) return { encoding: 'identity', stat: 'not_valid' };
  if (choice.coding === 'identity') return { encoding: 'identity', stat: 'identity' };
  if (choice.coding === '*') {
    const first = [...allowed].sort((a, b) => a[1] - b[1])[0]![0];
    return { encoding: first, stat: 'wildcard' };
  }
  return { encoding: choice.coding, stat: 'used' };
}

interface Counters {
  compressed: Counter;
  notCompressed: Counter;
  tooSmall: Counter;
  uncompressedBytes: Counter;
  compressedBytes: Counter;
  requestNotCompressed: Counter;
  noAcceptHeader: Counter;
  headerIdentity: Counter;
  headerWildcard: Counter;
  headerNotValid: Counter;
  headerUsed: Counter;
  headerOvershadowed: Counter;
  notCompressedEtag: Counter;
}

interface Settings {
  library: Library;
  enabled: () => boolean;
  minLength: number;
  types: Set<string>;
  disableOnEtag: boolean;
  removeAcceptEncoding: boolean;
}

/** The compressor filters of one request, in chain order, and the coding chosen for its response (once). */
interface Registry {
  filters: Settings[];
  decision?: { encoding: string; stat: HeaderStat };
}
const registries = new WeakMap<object, Registry>();

/** Transfer-Encoding codings that say the body is compressed already. */
const COMPRESSED_TRANSFER = new Set(['gzip', 'br', 'deflate', 'compress', 'zstd']);

/** A comma-separated header's tokens, trimmed and lower-cased. */
function tokens(v: unknown): string[] {
  const text = Array.isArray(v) ? v.join(',') : typeof v === 'string' ? v : '';
  return text.split(',').map((t) => t.trim().toLowerCase());
}

class CompressorFilter implements HttpFilter {
  private request: FilterRequest | undefined;
  private acceptEncoding: string | undefined;
  private registry: Registry | undefined;
  /** The route's CompressorPerRoute: compression switched off (disabled) or on (overrides.response_direction_config). */
  private routeEnabled: boolean | undefined;
  private headOnly = false;

  constructor(
    private readonly s: Settings,
    private readonly counters: Counters,
  ) {}

  decodeHeaders(request: FilterRequest): FilterDecision {
    this.request = request;
    this.acceptEncoding = requestHeader(request.rq, 'accept-encoding');
    this.headOnly = request.rq.method === 'HEAD';
    const perRoute = request.perRoute[0];
    const overrides = obj(obj(perRoute?.overrides).response_direction_config);
    if (perRoute?.disabled === true) this.routeEnabled = false;
    else if (obj(perRoute?.overrides).response_direction_config !== undefined) this.routeEnabled = true;
    // The request's compressor filters decide its response's coding together (Envoy's CompressorRegistry).
    this.registry = registries.get(request.rq) ?? registries.set(request.rq, { filters: [] }).get(request.rq)!;
    this.registry.filters.push(this.s);
    const removeHeader = typeof overrides.remove_accept_encoding_header === 'boolean' ? overrides.remove_accept_encoding_header : this.s.removeAcceptEncoding;
    if (this.enabled() && removeHeader) delete request.rq.headers['accept-encoding'];
    // Request bodies are never compressed here (request_direction_config is refused): counted as Envoy counts them.
    this.counters.requestNotCompressed.inc();
    return 'continue';
  }

  private enabled(): boolean {
    return this.routeEnabled ?? this.s.enabled();
  }

  encodeHeaders(status: number, headers: MutableHeaders): void {
    const request = this.request;
    if (!request) return;
    const enabledAndBigEnough = this.enabled() && this.bigEnough(headers);
    const compressible = enabledAndBigEnough && this.compressible(headers);
    const endStream = this.headOnly || status === 204 || status === 304 || status < 200;
    if (!endStream && this.acceptEncodingAllowed(enabledAndBigEnough, headers) && compressible && this.transferEncodingAllowed(headers)) {
      // As Envoy: a weak ETag stays, a strong one goes (the compressed body is another entity).
      const etag = headers.etag;
      if (typeof etag === 'string' && etag.length > 2 && !/^[wW]\//.test(etag)) delete headers.etag;
      delete headers['content-length'];
      headers['content-encoding'] = this.s.library.encoding;
      this.counters.compressed.inc();
      const transform = this.s.library.create();
      transform.on('data', (d: Buffer) => this.counters.compressedBytes.inc(d.length));
      request.transformBody(transform, (n) => this.counters.uncompressedBytes.inc(n));
    } else {
      this.counters.notCompressed.inc();
    }
    // Even when this request's Accept-Encoding refused it, a cache in front must know the response varies.
    if (compressible) {
      const vary = headers.vary;
      if (vary === undefined) headers.vary = 'Accept-Encoding';
      else if (!tokens(vary).includes('accept-encoding')) headers.vary = `${Array.isArray(vary) ? vary.join(', ') : String(vary)}, Accept-Encoding`;
    }
  }

  /** Envoy's isMinimumContentLength: a Content-Length, when there is one, that is a number of at least min_content_length. */
  private bigEnough(headers: MutableHeaders): boolean {
    const length = headers['content-length'];
    if (length === undefined) return true;
    const text = String(length);
    if (/^\d+$/.test(text) && Number(text) >= this.s.minLength) return true;
    this.counters.tooSmall.inc();
    return false;
  }

  private compressible(headers: MutableHeaders): boolean {
    const connection = tokens(headers.connection);
    if (connection.includes('upgrade') && headers.upgrade !== undefined) return false;
    const type = this.contentType(headers);
    if (type !== '' && !this.s.types.has(type)) return false;
    if (tokens(headers['cache-control']).includes('no-transform')) return false;
    if (this.s.disableOnEtag && headers.etag !== undefined) {
      this.counters.notCompressedEtag.inc();
      return false;
    }
    return headers['content-encoding'] === undefined;
  }

  private contentType(headers: MutableHeaders): string {
    return String(headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  }

  /** Envoy's isAcceptEncodingAllowed: the request's Accept-Encoding names this filter's coding as the one the chain uses. */
  private acceptEncodingAllowed(maybe: boolean, headers: MutableHeaders): boolean {
    if (!maybe) return false;
    if (this.acceptEncoding === undefined) {
      this.counters.noAcceptHeader.inc();
      return false;
    }
    const registry = this.registry!;
    registry.decision ??= chooseEncoding(this.acceptEncoding, registry.filters, this.contentType(headers));
    const { encoding, stat } = registry.decision;
    const mine = encoding === this.s.library.encoding;
    if (stat === 'used') (mine ? this.counters.headerUsed : this.counters.headerOvershadowed).inc();
    else if (stat === 'identity') this.counters.headerIdentity.inc();
    else if (stat === 'wildcard') this.counters.headerWildcard.inc();
    else this.counters.headerNotValid.inc();
    return mine;
  }

  private transferEncodingAllowed(headers: MutableHeaders): boolean {
    if (headers['transfer-encoding'] === undefined) return true;
    return !tokens(headers['transfer-encoding']).some((t) => COMPRESSED_TRANSFER.has(t) || t === this.s.library.encoding);
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
    minLength: typeof common.min_content_length === 'number' && common.min_content_length > 0 ? common.min_content_length : 30,
    types: new Set((types.length ? types : DEFAULT_TYPES).map((t) => t.toLowerCase())),
    disableOnEtag: response.disable_on_etag_header === true,
    removeAcceptEncoding: response.remove_accept_encoding_header === true,
  };
  // As Envoy's: http.<prefix>.compressor.<library name>.<gzip|brotli>., then `response.` for the
  // direction's figures when response_direction_config is set, and `request.` for the request's.
  const prefix = `http.${statPrefix}.compressor.${String(library.name ?? '')}.${s.library.encoding === 'br' ? 'brotli' : 'gzip'}.`;
  const direction = config.response_direction_config !== undefined ? `${prefix}response.` : prefix;
  const c = (n: string) => stats.counter(prefix + n);
  const d = (n: string) => stats.counter(direction + n);
  const counters: Counters = {
    compressed: d('compressed'),
    notCompressed: d('not_compressed'),
    tooSmall: d('content_length_too_small'),
    uncompressedBytes: d('total_uncompressed_bytes'),
    compressedBytes: d('total_compressed_bytes'),
    requestNotCompressed: c('request.not_compressed'),
    noAcceptHeader: c('no_accept_header'),
    headerIdentity: c('header_identity'),
    headerWildcard: c('header_wildcard'),
    headerNotValid: c('header_not_valid'),
    headerUsed: c('header_compressor_used'),
    headerOvershadowed: c('header_compressor_overshadowed'),
    notCompressedEtag: c('not_compressed_etag'),
  };
  return { name, create: () => new CompressorFilter(s, counters) };
}
