import assert from 'node:assert/strict';
import type { Transform } from 'node:stream';
import { afterEach, describe, it } from 'node:test';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { JsonObject } from '../../../../config/proto-json.js';
import type { MutableHeaders } from '../../../../header-mutation.js';
import { addEncodingToAcceptEncoding, decompressorFactory } from './decompressor.js';
import type { HttpFilterFactory } from '../../../../http/filter-api.js';
import { counter, decode, encode, releaseTransforms, through, type FakeRequestOptions, type FilterRun } from '../../../../../test/helpers/filter-harness.js';
import type { ConfigError } from '../../../../config/config-error.js';

/**
 * envoy.filters.http.decompressor alone (Envoy's decompressor_filter_test), in both directions:
 * which bodies are decompressed (the first Content-Encoding coding, any case or spacing; not with
 * Cache-Control no-transform unless told to ignore it; not when the direction is off), what the
 * headers become, Accept-Encoding advertised upstream, the bytes really inflated, and what is
 * counted under http.<prefix>.decompressor.<library name>.<gzip|brotli>.<request|response>.
 */

const NAME = 'envoy.filters.http.decompressor';
const GZIP = 'type.googleapis.com/envoy.extensions.compression.gzip.decompressor.v3.Gzip';
const BROTLI = 'type.googleapis.com/envoy.extensions.compression.brotli.decompressor.v3.Brotli';
const TEXT = Buffer.from('hello, decompressed world! '.repeat(20));

/** A gzip decompressor filter (library name `testlib`), with `extra` config fields. */
const gunzip = (prefix: string, extra: JsonObject = {}) => decompressorFactory(NAME, { decompressor_library: { name: 'testlib', typed_config: { '@type': GZIP } }, ...extra }, prefix);
const stat = (prefix: string, name: string, library = 'gzip') => counter(`http.${prefix}.decompressor.testlib.${library}.${name}`);
const off = { common_config: { enabled: { default_value: false, runtime_key: 'does_not_exist' } } };

afterEach(releaseTransforms);

/** As the harness's decode, asserting the decompressor never stops a request. */
async function request(factory: HttpFilterFactory, options: FakeRequestOptions = {}): Promise<FilterRun> {
  const run = await decode(factory, options);
  assert.equal(run.decision, 'continue', 'the decompressor never stops a request');
  return run;
}

/** Bytes through the transforms in order (the first told of what goes in), as the body would go. */
async function pipe(transforms: Transform[], bytesIn: (((n: number) => void) | undefined)[], input: Buffer): Promise<Buffer> {
  let data = input;
  for (const [i, t] of transforms.entries()) {
    bytesIn[i]?.(data.length);
    data = await through(t, data);
  }
  return data;
}

/** A POST with this body and these headers. */
const post = (body: Buffer, headers: Record<string, string>): FakeRequestOptions => ({ method: 'POST', body, headers });

describe('the decompressor filter', () => {
  it('inflates a gzip request body on its way upstream: the coding and the length gone, the bytes whole, counted under .request.', async () => {
    const compressed = gzipSync(TEXT);
    const { request: rq } = await request(gunzip('dec1'), post(compressed, { 'content-encoding': 'gzip' }));
    assert.equal(rq.rq.headers['content-encoding'], undefined);
    assert.equal(rq.rq.headers['content-length'], undefined, 'the compressed length is not the body’s any more');
    assert.ok(rq.requestTransforms.length > 0);
    assert.ok((await pipe(rq.requestTransforms, rq.requestBytesIn, compressed)).equals(TEXT), 'upstream gets the text');
    assert.deepEqual(
      [stat('dec1', 'request.decompressed'), stat('dec1', 'request.not_decompressed'), stat('dec1', 'request.total_compressed_bytes'), stat('dec1', 'request.total_uncompressed_bytes')],
      [1, 0, compressed.length, TEXT.length],
    );
  });

  it('inflates a gzip (or brotli) response for the client, counted under .response.', async () => {
    const compressed = gzipSync(TEXT);
    const run = await request(gunzip('dec2'));
    const headers = encode(run, 200, { 'content-encoding': 'gzip', 'content-length': String(compressed.length), 'content-type': 'text/plain' });
    assert.deepEqual([headers['content-encoding'], headers['content-length'], headers['content-type']], [undefined, undefined, 'text/plain']);
    assert.ok((await pipe(run.request.responseTransforms, run.request.responseBytesIn, compressed)).equals(TEXT));
    assert.deepEqual(
      [stat('dec2', 'response.decompressed'), stat('dec2', 'response.total_compressed_bytes'), stat('dec2', 'response.total_uncompressed_bytes')],
      [1, compressed.length, TEXT.length],
    );

    const br = decompressorFactory(NAME, { decompressor_library: { name: 'testlib', typed_config: { '@type': BROTLI } } }, 'dec2b');
    const brRun = await request(br, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(brRun.request.rq.headers['accept-encoding'], 'gzip,br', 'the brotli library advertises br');
    assert.equal(encode(brRun, 200, { 'content-encoding': 'gzip' })['content-encoding'], 'gzip', 'not its encoding');
    const brotli = brotliCompressSync(TEXT);
    const brBody = await request(br);
    assert.equal(encode(brBody, 200, { 'content-encoding': 'br' })['content-encoding'], undefined);
    assert.ok((await pipe(brBody.request.responseTransforms, [], brotli)).equals(TEXT));
    assert.deepEqual([stat('dec2b', 'response.decompressed', 'brotli'), stat('dec2b', 'response.not_decompressed', 'brotli')], [1, 1]);
  });

  it("takes the first Content-Encoding coding only (any case, any spacing), leaving the rest, in both directions", async () => {
    // [Content-Encoding, decompressed, what is left of it]
    const cases: [string, boolean, string | undefined][] = [
      ['gzip', true, undefined],
      [' gzip ', true, undefined],
      ['GZIP', true, undefined],
      ['gzip, br', true, 'br'],
      ['gzip, br , gzip ', true, 'br , gzip'],
      ['br,gzip', false, 'br,gzip'],
      ['not-matching', false, 'not-matching'],
    ];
    const f = gunzip('dec3');
    for (const [encoding, inflated, left] of cases) {
      const rq = (await request(f, post(Buffer.from('x'.repeat(256)), { 'content-encoding': encoding }))).request;
      assert.deepEqual([rq.requestTransforms.length > 0, rq.rq.headers['content-encoding']], [inflated, left], `request ${JSON.stringify(encoding)}`);
      const rs = await request(f);
      const headers = encode(rs, 200, { 'content-encoding': encoding, 'content-length': '256' });
      assert.deepEqual(
        [rs.request.responseTransforms.length, headers['content-encoding'], headers['content-length']],
        [inflated ? 1 : 0, left, inflated ? undefined : '256'],
        `response ${JSON.stringify(encoding)}`,
      );
    }
    const none = await request(f, post(Buffer.from('x'.repeat(256)), {}));
    assert.equal(none.request.requestTransforms.length, 0, 'no Content-Encoding');
    assert.equal(encode(await request(f), 200, { 'content-length': '256' })['content-length'], '256');
    const n = cases.filter((c) => c[1]).length;
    assert.deepEqual([stat('dec3', 'request.decompressed'), stat('dec3', 'request.not_decompressed')], [n, cases.length - n + 1]);
    assert.deepEqual([stat('dec3', 'response.decompressed'), stat('dec3', 'response.not_decompressed')], [n, cases.length - n + 1]);
  });

  it('advertises its encoding upstream while response decompression is on (appended to what the client accepts, not twice), and not when told not to', async () => {
    const f = gunzip('dec4');
    const headersOnly = await request(f);
    assert.equal(headersOnly.request.rq.headers['accept-encoding'], 'gzip', 'even on a request without a body');
    assert.equal((await request(f, { headers: { 'accept-encoding': 'br' } })).request.rq.headers['accept-encoding'], 'br,gzip');
    // Envoy's addEncodingToAcceptEncoding: its own coding moves last, without a q-value; the others keep theirs.
    assert.equal((await request(f, { headers: { 'accept-encoding': 'br, gzip' } })).request.rq.headers['accept-encoding'], 'br,gzip');
    assert.equal((await request(f, { headers: { 'accept-encoding': 'br,gzip, gzip\t,gzip ;q=0.3' } })).request.rq.headers['accept-encoding'], 'br,gzip', 'duplicates and its q-value gone');
    assert.equal((await request(f, { headers: { 'accept-encoding': 'gzip;q=0.6, deflate;q=0.2' } })).request.rq.headers['accept-encoding'], 'deflate;q=0.2,gzip');
    assert.equal(addEncodingToAcceptEncoding('one,two', 'one'), 'two,one');
    assert.equal(addEncodingToAcceptEncoding('', 'one'), 'one');
    const quiet = gunzip('dec4q', { request_direction_config: { advertise_accept_encoding: false } });
    const r = await request(quiet, post(gzipSync(TEXT), { 'content-encoding': 'gzip' }));
    assert.equal(r.request.rq.headers['accept-encoding'], undefined);
    assert.equal(r.request.requestTransforms.length > 0, true, 'it still decompresses the request');
    const responsesOff = gunzip('dec4r', { response_direction_config: off });
    assert.equal((await request(responsesOff)).request.rq.headers['accept-encoding'], undefined, 'no response decompression, nothing to advertise');
  });

  it('leaves a direction alone when it is switched off: requests off still advertises, responses off still inflates requests', async () => {
    const both = gunzip('dec5', { request_direction_config: off, response_direction_config: off });
    const r = await request(both, post(gzipSync(TEXT), { 'content-encoding': 'gzip' }));
    assert.deepEqual([r.request.requestTransforms.length, r.request.rq.headers['content-encoding'], r.request.rq.headers['content-length'], r.request.rq.headers['accept-encoding']], [0, 'gzip', String(gzipSync(TEXT).length), undefined]);
    const headers = encode(r, 200, { 'content-encoding': 'gzip', 'content-length': '256' });
    assert.deepEqual([r.request.responseTransforms.length, headers['content-encoding'], headers['content-length']], [0, 'gzip', '256']);
    assert.deepEqual([stat('dec5', 'request.not_decompressed'), stat('dec5', 'response.not_decompressed')], [1, 1]);

    const requestsOff = gunzip('dec5q', { request_direction_config: off });
    const q = await request(requestsOff, post(gzipSync(TEXT), { 'content-encoding': 'gzip' }));
    assert.deepEqual([q.request.requestTransforms.length, q.request.rq.headers['accept-encoding']], [0, 'gzip']);
    assert.equal(encode(q, 200, { 'content-encoding': 'gzip' })['content-encoding'], undefined, 'responses are still inflated');

    const responsesOff = gunzip('dec5s', { response_direction_config: off });
    const s = await request(responsesOff, post(gzipSync(TEXT), { 'content-encoding': 'gzip' }));
    assert.equal(s.request.rq.headers['content-encoding'], undefined, 'requests are still inflated');
    assert.equal(encode(s, 200, { 'content-encoding': 'gzip' })['content-encoding'], 'gzip');
  });

  it('respects Cache-Control no-transform (alone or in a list), unless that direction ignores it; and leaves bodiless responses alone', async () => {
    const f = gunzip('dec6');
    for (const cacheControl of ['no-transform', 'no-cache, no-transform']) {
      const r = await request(f, post(gzipSync(TEXT), { 'content-encoding': 'gzip, br , gzip ', 'cache-control': cacheControl }));
      assert.deepEqual([r.request.requestTransforms.length, r.request.rq.headers['content-encoding'], r.request.rq.headers['accept-encoding']], [0, 'gzip, br , gzip ', 'gzip'], cacheControl);
      const headers = encode(r, 200, { 'content-encoding': 'gzip', 'cache-control': cacheControl, 'content-length': '256' });
      assert.deepEqual([r.request.responseTransforms.length, headers['content-encoding'], headers['content-length']], [0, 'gzip', '256'], cacheControl);
    }
    const ignoring = gunzip('dec6i', { response_direction_config: { common_config: { ignore_no_transform_header: true } } });
    const r = await request(ignoring, post(gzipSync(TEXT), { 'content-encoding': 'gzip', 'cache-control': 'no-transform' }));
    assert.equal(r.request.requestTransforms.length, 0, 'the request direction still respects it');
    const headers = encode(r, 200, { 'content-encoding': 'gzip', 'cache-control': 'no-transform', 'content-length': '256' });
    assert.deepEqual([r.request.responseTransforms.length, headers['content-encoding']], [1, undefined], 'the response direction ignores it');

    for (const [status, extra] of [[204, {}], [304, {}], [200, { 'content-length': '0' }]] as [number, MutableHeaders][]) {
      const h = encode(await request(f), status, { 'content-encoding': 'gzip', ...extra });
      assert.equal(h['content-encoding'], 'gzip', `status ${status} ${JSON.stringify(extra)}`);
    }
    const head = await request(f, { method: 'HEAD' });
    assert.deepEqual([encode(head, 200, { 'content-encoding': 'gzip', 'content-length': '50' })['content-encoding'], head.request.responseTransforms.length], ['gzip', 0], 'HEAD');
  });

  it('refuses to inflate past max_inflate_ratio (100 by default): the body fails rather than grows a hundredfold', async () => {
    const bomb = gzipSync(Buffer.alloc(1 << 20));
    const run = await request(gunzip('dec7'));
    encode(run, 200, { 'content-encoding': 'gzip' });
    await assert.rejects(through(run.request.responseTransforms[0]!, bomb), /max_inflate_ratio/);
    assert.ok(stat('dec7', 'response.total_uncompressed_bytes') <= bomb.length * 100, 'no more than the ratio allows got out');

    const roomy = gunzip('dec7r', { decompressor_library: { name: 'testlib', typed_config: { '@type': GZIP, max_inflate_ratio: 2000 } } });
    const ok = await request(roomy);
    encode(ok, 200, { 'content-encoding': 'gzip' });
    assert.equal((await through(ok.request.responseTransforms[0]!, bomb)).length, 1 << 20, 'a larger ratio lets it through');
  });
});

describe("the decompressor filter's descriptor", () => {
  it('refuses a compressor library where a decompressor library goes, naming the field', async () => {
    const { extensions } = await import('./descriptor.js');
    const filter = extensions.find((e) => e.name === 'envoy.filters.http.decompressor');
    assert.ok(filter && 'validate' in filter && filter.validate);
    const library = (type: string) => ({ decompressor_library: { name: 'lib', typed_config: { '@type': `type.googleapis.com/${type}` } } });
    const errors: ConfigError[] = [];
    filter.validate(library('envoy.extensions.compression.brotli.compressor.v3.Brotli'), 'f', errors);
    assert.deepEqual(errors.map((e) => [e.code, e.path]), [['wrong_extension', 'f.decompressor_library.typed_config']]);
    filter.validate(library('envoy.extensions.compression.gzip.decompressor.v3.Gzip'), 'f', errors);
    assert.equal(errors.length, 1);
  });
});
