import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { JsonObject } from '../../../../config/proto-json.js';
import type { MutableHeaders } from '../../../../header-mutation.js';
import { EMPTY_RUNTIME, setRuntime } from '../../../../runtime.js';
import { compressorFactory } from './compressor.js';
import type { HttpFilterFactory } from '../../../../http/filter-api.js';
import { counter, decode, encode, FakeRequest, releaseTransforms, routesOf, through, type FakeRequestOptions, type FilterRun } from '../../../../../test/helpers/filter-harness.js';
import type { ConfigError } from '../../../../config/config-error.js';

/**
 * envoy.filters.http.compressor alone (Envoy's compressor_filter_test): which responses are
 * compressed (Accept-Encoding and its q-values, content type, length, encoding, status,
 * Cache-Control), what the headers become, that the body really is gzip (or brotli), and what is
 * counted under http.<prefix>.compressor.<library name>.<gzip|brotli>.
 */

const NAME = 'envoy.filters.http.compressor';
const GZIP = 'type.googleapis.com/envoy.extensions.compression.gzip.compressor.v3.Gzip';
const BROTLI = 'type.googleapis.com/envoy.extensions.compression.brotli.compressor.v3.Brotli';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.compressor.v3.CompressorPerRoute';

/** A gzip compressor filter (library name `test`), with `extra` config fields. */
const gzip = (prefix: string, extra: JsonObject = {}) => compressorFactory(NAME, { compressor_library: { name: 'test', typed_config: { '@type': GZIP } }, ...extra }, prefix);
const stat = (prefix: string, name: string, library = 'gzip') => counter(`http.${prefix}.compressor.test.${library}.${name}`);

afterEach(releaseTransforms);

/** As the harness's decode, asserting the filter never stops a request. */
async function request(factory: HttpFilterFactory, options: FakeRequestOptions = {}): Promise<FilterRun> {
  return decode(factory, options);
}

/** The response's body through the filter's transform, as the pipeline sends it (bytes counted going in). */
function body(run: FilterRun, input: Buffer): Promise<Buffer> {
  assert.equal(run.request.responseTransforms.length, 1, 'the filter added one transform to the response body');
  run.request.responseBytesIn[0]?.(input.length);
  return through(run.request.responseTransforms[0]!, input);
}

/** A compressible text of `size` bytes. */
const text = (size: number) => Buffer.from('The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(size / 45)).slice(0, size));

/** Runs one request (Accept-Encoding `accept`) and one response (status, headers) through a new filter; the response headers after it. */
async function exchange(factory: HttpFilterFactory, accept: string | undefined, status: number, response: MutableHeaders, options: FakeRequestOptions = {}) {
  const run = await request(factory, { ...options, headers: { ...(accept === undefined ? {} : { 'accept-encoding': accept }), ...options.headers } });
  assert.equal(run.decision, 'continue', 'the compressor never stops a request');
  const headers = encode(run, status, response);
  return { run, headers, compressed: run.request.responseTransforms.length === 1 && headers['content-encoding'] === 'gzip' };
}

describe('the compressor filter', () => {
  it('compresses an accepted text response: Content-Length goes, Content-Encoding and Vary come, the body gunzips to what went in, and it is counted', async () => {
    const f = gzip('cmp1');
    const { run, headers } = await exchange(f, 'deflate, gzip', 200, { 'content-type': 'text/html', 'content-length': '256' });
    assert.equal(headers['content-length'], undefined);
    assert.equal(headers['content-encoding'], 'gzip');
    assert.equal(headers.vary, 'Accept-Encoding');
    const input = text(256);
    const out = await body(run, input);
    assert.ok(gunzipSync(out).equals(input), 'the bytes decompress back to the response body');
    assert.ok(out.length < input.length, 'a repetitive text gets smaller');
    assert.equal(stat('cmp1', 'compressed'), 1);
    assert.equal(stat('cmp1', 'not_compressed'), 0);
    assert.equal(stat('cmp1', 'total_uncompressed_bytes'), 256);
    assert.equal(stat('cmp1', 'total_compressed_bytes'), out.length);
  });

  it('compresses with brotli when the library is brotli and the client accepts br, counted under .brotli.', async () => {
    const f = compressorFactory(NAME, { compressor_library: { name: 'test', typed_config: { '@type': BROTLI, quality: 5 } } }, 'cmp2');
    const gzipOnly = await exchange(f, 'gzip', 200, { 'content-type': 'application/json', 'content-length': '1000' });
    assert.equal(gzipOnly.headers['content-encoding'], undefined, 'gzip is not this filter’s encoding');
    const { run, headers } = await exchange(f, 'gzip, br', 200, { 'content-type': 'application/json', 'content-length': '1000' });
    assert.equal(headers['content-encoding'], 'br');
    const input = text(1000);
    assert.ok(brotliDecompressSync(await body(run, input)).equals(input));
    assert.deepEqual([stat('cmp2', 'compressed', 'brotli'), stat('cmp2', 'header_not_valid', 'brotli')], [1, 1]);
  });

  it("negotiates by Accept-Encoding as Envoy's IsAcceptEncodingAllowed cases: q-values, tabs, the wildcard, identity", async () => {
    // [Accept-Encoding, compressed, header_wildcard, header_not_valid, header_identity]
    const cases: [string, boolean, number, number, number][] = [
      ['deflate, gzip, br', true, 0, 0, 0],
      ['deflate, gzip;q=1.0, *;q=0.5', true, 0, 0, 0],
      ['\tdeflate\t, gzip\t ; q\t =\t 1.0,\t * ;q=0.5', true, 0, 0, 0],
      ['deflate,gzip;q=1.0,*;q=0', true, 0, 0, 0],
      ['deflate, gzip;q=0.2, br;q=1', true, 0, 0, 0],
      ['deflate, gzip;Q=.5, br', true, 0, 0, 0],
      ['*', true, 1, 0, 0],
      ['*;q=1', true, 1, 0, 0],
      ['xyz;q=1, br;q=0.2, *', true, 1, 0, 0],
      ['gzip;q=0,*;q=1', false, 0, 1, 0],
      ['identity', false, 0, 0, 1],
      ['identity;q=1', false, 0, 0, 1],
      ['identity;q=0, *;q=0', false, 0, 1, 0],
      ['xyz;q=1, br;q=0.2, *;q=0', false, 0, 1, 0],
      ['xyz;q=1, br;q=0.2', false, 0, 1, 0],
    ];
    for (const [i, [accept, compress, wildcard, notValid, identity]] of cases.entries()) {
      const prefix = `cmp3_${i}`;
      const { compressed, headers } = await exchange(gzip(prefix), accept, 200, { 'content-type': 'text/plain', 'content-length': '256' });
      assert.equal(compressed, compress, JSON.stringify(accept));
      if (!compress) assert.equal(headers['content-length'], '256', `${JSON.stringify(accept)}: the response is left as it is`);
      assert.deepEqual(
        [stat(prefix, 'compressed'), stat(prefix, 'header_wildcard'), stat(prefix, 'header_not_valid'), stat(prefix, 'header_identity'), stat(prefix, 'no_accept_header')],
        [compress ? 1 : 0, wildcard, notValid, identity, 0],
        JSON.stringify(accept),
      );
    }
    const none = await exchange(gzip('cmp3_none'), undefined, 200, { 'content-type': 'text/plain', 'content-length': '256' });
    assert.equal(none.compressed, false);
    assert.equal(stat('cmp3_none', 'no_accept_header'), 1);
  });

  it("compresses Envoy's default content types (any case, with parameters), and only the configured ones when content_type is given", async () => {
    const defaults = [
      'text/html', 'text/xml', 'text/plain', 'text/css', 'application/javascript', 'application/x-javascript', 'text/javascript', 'text/x-javascript',
      'text/ecmascript', 'text/js', 'text/jscript', 'text/x-js', 'application/ecmascript', 'application/x-json', 'application/xml', 'application/json',
      'image/svg+xml', 'application/xhtml+xml', 'application/json;charset=utf-8', 'Application/XHTML+XML', '\ttext/html\t',
    ];
    const f = gzip('cmp4');
    for (const type of [...defaults, 'image/jpeg']) {
      const { compressed, headers } = await exchange(f, 'gzip, deflate', 200, { 'content-type': type, 'content-length': '256' });
      assert.equal(compressed, type !== 'image/jpeg', JSON.stringify(type));
      assert.equal(headers.vary !== undefined, type !== 'image/jpeg', `${JSON.stringify(type)}: Vary only with the compressed response`);
    }
    assert.deepEqual([stat('cmp4', 'compressed'), stat('cmp4', 'not_compressed')], [defaults.length, 1]);

    const custom = gzip('cmp4c', { response_direction_config: { common_config: { content_type: ['text/html', 'xyz/svg+xml', 'Test/INSENSITIVE'] } } });
    for (const [type, compress] of [['xyz/svg+xml', true], ['xyz/false', false], ['image/jpeg', false], ['test/insensitive', true], ['text/plain', false]] as const) {
      assert.equal((await exchange(custom, 'gzip', 200, { 'content-type': type, 'content-length': '256' })).compressed, compress, type);
    }
  });

  it('compresses from min_content_length (30 by default) up, and a response whose length is not known', async () => {
    const f = gzip('cmp5');
    for (const [length, compress] of [['31', true], ['30', true], ['29', false]] as const) {
      assert.equal((await exchange(f, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': length })).compressed, compress, `content-length ${length}`);
    }
    assert.equal(stat('cmp5', 'content_length_too_small'), 1);
    const big = gzip('cmp5b', { response_direction_config: { common_config: { min_content_length: 500 } } });
    for (const [length, compress] of [[undefined, true], ['501', true], ['499', false]] as const) {
      const headers: MutableHeaders = { 'content-type': 'text/plain', ...(length === undefined ? {} : { 'content-length': length }) };
      assert.equal((await exchange(big, 'gzip', 200, headers)).compressed, compress, `content-length ${String(length)}`);
    }
    assert.equal(stat('cmp5b', 'response.content_length_too_small'), 1, "with response_direction_config the direction's figures are under response., as Envoy's");
  });

  it('leaves alone a response already encoded, one with Cache-Control no-transform, one without a body (204, 304, 1xx, HEAD), and compresses a 206', async () => {
    const f = gzip('cmp6');
    const encoded = await exchange(f, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256', 'content-encoding': 'deflate, gzip' });
    assert.deepEqual([encoded.compressed, encoded.headers['content-length'], encoded.headers['content-encoding']], [false, '256', 'deflate, gzip']);
    for (const cacheControl of ['no-transform', 'No-Transform', 'max-age=60, no-transform']) {
      const r = await exchange(f, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256', 'cache-control': cacheControl });
      assert.deepEqual([r.compressed, r.headers.vary], [false, undefined], cacheControl);
    }
    assert.equal((await exchange(f, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256', 'cache-control': 'no-cache' })).compressed, true);
    for (const status of [204, 304, 100]) {
      const r = await exchange(f, 'gzip', status, { 'content-type': 'text/plain' });
      assert.deepEqual([r.compressed, r.headers['content-encoding']], [false, undefined], `status ${status}`);
    }
    const head = await exchange(f, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256' }, { method: 'HEAD' });
    assert.deepEqual([head.compressed, head.headers['content-length']], [false, '256'], 'HEAD');
    assert.equal((await exchange(f, 'gzip', 206, { 'content-type': 'text/plain', 'content-length': '256' })).compressed, true, '206');
    assert.deepEqual([stat('cmp6', 'compressed'), stat('cmp6', 'not_compressed')], [2, 8], 'every response not compressed counts, HEAD too');
  });

  it("adds Accept-Encoding to the upstream's Vary once; keeps a weak ETag, never sends the strong one with a compressed body, and with disable_on_etag_header leaves a response with an ETag alone", async () => {
    const v = gzip('cmp7');
    for (const [vary, expected] of [
      [undefined, 'Accept-Encoding'],
      ['Cookie', 'Cookie, Accept-Encoding'],
      ['Accept-Encoding, Cookie', 'Accept-Encoding, Cookie'],
      ['User-Agent, Cookie', 'User-Agent, Cookie, Accept-Encoding'],
      ['Accept-Encoding', 'Accept-Encoding'],
    ] as const) {
      const r = await exchange(v, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256', ...(vary === undefined ? {} : { vary }) });
      assert.deepEqual([r.compressed, r.headers.vary], [true, expected], String(vary));
    }
    const f = gzip('cmp8');
    const weak = await exchange(f, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256', etag: 'W/"686897696a7c876b7e"' });
    assert.deepEqual([weak.compressed, weak.headers.etag], [true, 'W/"686897696a7c876b7e"']);
    const strong = await exchange(f, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256', etag: '"686897696a7c876b7e"' });
    assert.equal(strong.compressed, true);
    assert.equal(strong.headers.etag, undefined, 'the strong validator was for the uncompressed bytes: removed, as Envoy removes it');
    const lower = await exchange(f, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256', etag: 'w/"abc"' });
    assert.equal(lower.headers.etag, 'w/"abc"', 'w/ is weak too');

    const careful = gzip('cmp8d', { response_direction_config: { disable_on_etag_header: true } });
    const tagged = await exchange(careful, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256', etag: '"686897696a7c876b7e"' });
    assert.deepEqual([tagged.compressed, tagged.headers.etag, tagged.headers.vary, tagged.headers['content-length']], [false, '"686897696a7c876b7e"', undefined, '256']);
    const other = await exchange(careful, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256', 'x-garbage': 'garbagevalue' });
    assert.equal(other.compressed, true, 'another header is no reason not to compress');
    assert.deepEqual([stat('cmp8d', 'response.compressed'), stat('cmp8d', 'response.not_compressed'), stat('cmp8d', 'not_compressed_etag')], [1, 1, 1]);
  });

  it('is switched off by common_config.enabled (its runtime key too) and by a route’s CompressorPerRoute; remove_accept_encoding_header, overridden per route', async () => {
    const response = () => ({ 'content-type': 'text/plain', 'content-length': '256' });
    const off = gzip('cmp9', { response_direction_config: { common_config: { enabled: { default_value: false } } } });
    assert.equal((await exchange(off, 'gzip', 200, response())).compressed, false);
    assert.equal((await exchange(off, undefined, 200, response())).compressed, false);
    assert.equal(stat('cmp9', 'no_accept_header'), 0, 'a filter switched off counts nothing');

    const keyed = gzip('cmp9r', { response_direction_config: { common_config: { enabled: { default_value: true, runtime_key: 'cmp9r.enabled' } } } });
    assert.equal((await exchange(keyed, 'gzip', 200, response())).compressed, true);
    setRuntime({ layers: ['admin'], entries: { 'cmp9r.enabled': ['false'] } });
    try {
      assert.equal((await exchange(keyed, 'gzip', 200, response())).compressed, false, 'the runtime turned it off');
    } finally {
      setRuntime(EMPTY_RUNTIME);
    }

    const routeConfig = routesOf([
      { match: { prefix: '/plain' }, route: { cluster: 'backend' }, typed_per_filter_config: { [NAME]: { '@type': PER_ROUTE, disabled: true } } },
      { match: { prefix: '/keep' }, route: { cluster: 'backend' }, typed_per_filter_config: { [NAME]: { '@type': PER_ROUTE, overrides: { response_direction_config: { remove_accept_encoding_header: false } } } } },
      { match: { prefix: '/drop' }, route: { cluster: 'backend' }, typed_per_filter_config: { [NAME]: { '@type': PER_ROUTE, overrides: { response_direction_config: { remove_accept_encoding_header: true } } } } },
      { match: { prefix: '/' }, route: { cluster: 'backend' } },
    ]);
    const f = gzip('cmp9p');
    assert.equal((await exchange(f, 'gzip', 200, response(), { path: '/plain/x', routeConfig })).compressed, false, 'CompressorPerRoute disabled');
    assert.equal((await exchange(f, 'gzip', 200, response(), { path: '/x', routeConfig })).compressed, true);

    const accept = 'deflate, test, gzip, br';
    const acceptEncoding = async (factory: HttpFilterFactory, path: string) => (await exchange(factory, accept, 200, response(), { path, routeConfig })).run.request.rq.headers['accept-encoding'];
    const removing = gzip('cmp9x', { response_direction_config: { remove_accept_encoding_header: true } });
    assert.equal(await acceptEncoding(removing, '/x'), undefined, 'removed by the filter’s setting');
    assert.equal(await acceptEncoding(removing, '/keep'), accept, 'the route says keep it');
    assert.equal(await acceptEncoding(f, '/x'), accept, 'kept by default');
    assert.equal(await acceptEncoding(f, '/drop'), undefined, 'the route says remove it');
    const dropped = await exchange(removing, accept, 200, response(), { path: '/x', routeConfig });
    assert.equal(dropped.compressed, true, 'the client’s Accept-Encoding still decides, though the upstream does not see it');
  });
});

describe('the compressor filter, as Envoy decides', () => {
  it('compresses a response without a Content-Type', async () => {
    const r = await exchange(gzip('cmpA'), 'gzip', 200, { 'content-length': '256' });
    assert.equal(r.compressed, true);
  });

  it('adds Vary and counts not_compressed when the request does not take the coding, and counts the Accept-Encoding verdicts', async () => {
    const f = gzip('cmpB');
    const none = await exchange(f, undefined, 200, { 'content-type': 'text/plain', 'content-length': '256' });
    assert.deepEqual([none.compressed, none.headers.vary], [false, 'Accept-Encoding'], 'a cache in front must know the response varies');
    const identity = await exchange(f, 'identity', 200, { 'content-type': 'text/plain', 'content-length': '256' });
    assert.deepEqual([identity.compressed, identity.headers.vary], [false, 'Accept-Encoding']);
    assert.deepEqual([stat('cmpB', 'no_accept_header'), stat('cmpB', 'header_identity'), stat('cmpB', 'not_compressed')], [1, 1, 2]);
    // Too small to compress: the Accept-Encoding figures are not touched, and no Vary.
    const small = await exchange(f, undefined, 200, { 'content-type': 'text/plain', 'content-length': '3' });
    assert.deepEqual([small.headers.vary, stat('cmpB', 'no_accept_header')], [undefined, 1]);
    assert.equal(stat('cmpB', 'request.not_compressed'), 3, 'request bodies are never compressed, and counted so');
  });

  it('reads Accept-Encoding as Envoy does: a q-value that does not parse drops its coding, identity and q=0', async () => {
    for (const [header, counterName] of [
      ['gzip;q=invalid', 'header_not_valid'],
      ['', 'header_not_valid'],
      ['identity;q=0', 'header_not_valid'],
      ['identity, *;q=0', 'header_identity'],
      ['identity;q=0.5, *;q=0', 'header_identity'],
      ['*', 'header_wildcard'],
      ['GZIP;Q=0.5', 'header_compressor_used'],
    ] as const) {
      const prefix = `cmpC${header.replace(/[^a-z]/gi, '') || 'empty'}`;
      const r = await exchange(gzip(prefix), header, 200, { 'content-type': 'text/plain', 'content-length': '256' });
      assert.equal(stat(prefix, counterName), 1, `${JSON.stringify(header)} counts ${counterName}`);
      assert.equal(r.compressed, counterName === 'header_wildcard' || counterName === 'header_compressor_used', JSON.stringify(header));
    }
  });

  it('with gzip and brotli in one chain, compresses once, with the coding the client weighs highest (* takes the first filter)', async () => {
    const br = (prefix: string) => compressorFactory(NAME, { compressor_library: { name: 'test', typed_config: { '@type': BROTLI } } }, prefix);
    const run = async (accept: string, prefix: string) => {
      const request = new FakeRequest({ headers: { 'accept-encoding': accept } });
      const chain = [gzip(prefix).create(), br(prefix).create()];
      for (const filter of chain) await filter.decodeHeaders(request);
      const headers: MutableHeaders = { 'content-type': 'text/plain', 'content-length': '256' };
      // Responses go back through the chain in reverse order.
      for (const filter of [...chain].reverse()) filter.encodeHeaders?.(200, headers);
      return headers;
    };
    assert.equal((await run('gzip;q=0.5, br;q=1', 'cmpD1'))['content-encoding'], 'br');
    assert.equal((await run('br;q=0.2, gzip', 'cmpD2'))['content-encoding'], 'gzip', 'the filter that runs first on the response defers to the one chosen');
    assert.deepEqual([stat('cmpD2', 'header_compressor_used'), stat('cmpD2', 'header_compressor_overshadowed', 'brotli')], [1, 1]);
    assert.equal((await run('*', 'cmpD3'))['content-encoding'], 'gzip', 'the first compressor of the chain');
    assert.equal((await run('gzip;q=0, *', 'cmpD4'))['content-encoding'], 'br', 'q=0 takes gzip out, * then means brotli');
  });

  it('leaves a body with a compressing Transfer-Encoding alone, and a route overriding response_direction_config enables it whatever the runtime says', async () => {
    const r = await exchange(gzip('cmpE'), 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256', 'transfer-encoding': 'gzip, chunked' });
    assert.equal(r.compressed, false);
    const off = gzip('cmpF', { response_direction_config: { common_config: { enabled: { default_value: false, runtime_key: 'cmpF.enabled' } } } });
    assert.equal((await exchange(off, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256' })).compressed, false);
    const routeConfig = routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: { [NAME]: { '@type': PER_ROUTE, overrides: { response_direction_config: {} } } } }]);
    assert.equal((await exchange(off, 'gzip', 200, { 'content-type': 'text/plain', 'content-length': '256' }, { routeConfig })).compressed, true);
  });
});

describe("the compressor filter's descriptor", () => {
  it('refuses a decompressor library where a compressor library goes, naming the field', async () => {
    const { extensions } = await import('./descriptor.js');
    const filter = extensions.find((e) => e.name === 'envoy.filters.http.compressor');
    assert.ok(filter && 'validate' in filter && filter.validate);
    const library = (type: string) => ({ compressor_library: { name: 'lib', typed_config: { '@type': `type.googleapis.com/${type}` } } });
    const errors: ConfigError[] = [];
    filter.validate(library('envoy.extensions.compression.gzip.decompressor.v3.Gzip'), 'http_filters[0].typed_config', errors);
    assert.deepEqual(errors.map((e) => [e.code, e.path]), [['wrong_extension', 'http_filters[0].typed_config.compressor_library.typed_config']]);
    filter.validate(library('envoy.extensions.compression.brotli.compressor.v3.Brotli'), 'http_filters[0].typed_config', errors);
    assert.equal(errors.length, 1);
  });
});
