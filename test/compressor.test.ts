import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { filterBootstrap } from './helpers/bootstraps.js';
import { startProxy, statValue, stopAllProxies, withDeadline, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/** The compressor filter (envoy.filters.http.compressor) with gzip and brotli, negotiated by Accept-Encoding. */

let upstream: Upstream;
let proxy: RunningProxy;
const COMPRESSOR = 'type.googleapis.com/envoy.extensions.filters.http.compressor.v3.Compressor';
const compressor = (name: string, type: string) => ({ name: `compressor-${name}`, typed_config: { '@type': COMPRESSOR, compressor_library: { name, typed_config: { '@type': type } } } });

before(async () => {
  upstream = await startUpstream('A');
  const filters = [
    compressor('text', 'type.googleapis.com/envoy.extensions.compression.gzip.compressor.v3.Gzip'),
    compressor('text', 'type.googleapis.com/envoy.extensions.compression.brotli.compressor.v3.Brotli'),
  ];
  const routes = [
    { match: { prefix: '/tiny' }, direct_response: { status: 200, body: { inline_string: 'tiny' } } },
    { match: { prefix: '/plain' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'compressor-text': { '@type': 'type.googleapis.com/envoy.extensions.filters.http.compressor.v3.CompressorPerRoute', disabled: true } } },
    { match: { prefix: '/' }, route: { cluster: 'backend' } },
  ];
  proxy = await startProxy(filterBootstrap('zip', filters, routes, upstream.port), ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

/** A request whose response body is kept as bytes. */
function fetchRaw(path: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: proxy.ports.get('zip'), path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}
const stat = (encoding: string, name: string) => statValue(proxy, `http.zip.compressor.text.${encoding}.${name}`);

describe('the compressor filter', () => {
  it('compresses with gzip for a client that accepts it: Content-Encoding, Vary, no Content-Length', async () => {
    const r = await fetchRaw('/echo', { 'accept-encoding': 'gzip' });
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.match(String(r.headers.vary), /Accept-Encoding/);
    assert.equal(r.headers['content-length'], undefined);
    assert.equal(JSON.parse(gunzipSync(r.body).toString()).name, 'A');
    assert.equal(await stat('gzip', 'compressed'), 1);
    assert.equal(await stat('gzip', 'total_compressed_bytes'), r.body.length, 'the bytes sent');
    assert.ok((await stat('gzip', 'total_uncompressed_bytes')) > 0);
  });

  it('compresses with brotli for a client that accepts br; when both are accepted, with the coding weighed highest (the first named on a tie), as Envoy', async () => {
    const br = await fetchRaw('/echo', { 'accept-encoding': 'br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(JSON.parse(brotliDecompressSync(br.body).toString()).name, 'A');
    assert.equal((await fetchRaw('/echo', { 'accept-encoding': 'gzip, br' })).headers['content-encoding'], 'gzip');
    assert.equal((await fetchRaw('/echo', { 'accept-encoding': 'gzip;q=0.5, br' })).headers['content-encoding'], 'br');
  });

  it('leaves alone: no Accept-Encoding, q=0, HEAD, a body under min_content_length, a route that switches it off', async () => {
    for (const [path, headers, method] of [
      ['/echo', {}, 'GET'],
      ['/echo', { 'accept-encoding': 'gzip;q=0, br;q=0' }, 'GET'],
      ['/echo', { 'accept-encoding': 'gzip' }, 'HEAD'],
      ['/tiny', { 'accept-encoding': 'gzip' }, 'GET'],
      ['/plain/echo', { 'accept-encoding': 'gzip' }, 'GET'],
    ] as [string, Record<string, string>, string][]) {
      const r = await fetchRaw(path, headers, method);
      assert.equal(r.headers['content-encoding'], undefined, `${method} ${path} ${JSON.stringify(headers)}`);
    }
    assert.ok((await stat('gzip', 'no_accept_header')) >= 1);
    assert.ok((await stat('gzip', 'content_length_too_small')) >= 1);
  });
});

describe('the compressor filter on a large body', () => {
  let bigUpstream: Server;
  let bigProxy: RunningProxy;
  // Random bytes do not compress: about 2 MB of compressed output, in pieces as large as chunk_size.
  const body = randomBytes(2 << 20);

  before(async () => {
    bigUpstream = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(body);
    });
    await new Promise<void>((r) => bigUpstream.listen(0, '127.0.0.1', r));
    const gzip = { name: 'compressor-big', typed_config: { '@type': COMPRESSOR, compressor_library: { name: 'big', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.compression.gzip.compressor.v3.Gzip', chunk_size: 16384 } } } };
    bigProxy = await startProxy(filterBootstrap('bigzip', [gzip], [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], (bigUpstream.address() as { port: number }).port), ['--concurrency', '1']);
  });

  after(() => new Promise<void>((r) => bigUpstream.close(() => r())));

  // Pieces of chunk_size (16 KB) fill the client's write buffer at each write: the filter waits for
  // the response's 'drain' each time, which must come even when the kernel took the bytes at once.
  it('with a chunk_size as large as the write buffer, every byte arrives (the filter is told when to go on)', async () => {
    const r = await withDeadline('the whole compressed body', new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: bigProxy.ports.get('bigzip'), path: '/', headers: { 'accept-encoding': 'gzip' }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    }));
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.ok(gunzipSync(r.body).equals(body), 'the whole body, decompressed, is what the upstream sent');
  });
});
