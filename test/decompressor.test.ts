import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { filterBootstrap } from './helpers/bootstraps.js';
import { startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/** The decompressor filter (envoy.filters.http.decompressor) as Envoy's, with gzip and brotli, both directions. */

let upstream: Server;
let proxy: RunningProxy;
const seen: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
const DECOMPRESSOR = 'type.googleapis.com/envoy.extensions.filters.http.decompressor.v3.Decompressor';
const library = (name: string, type: string) => ({ name, typed_config: { '@type': `type.googleapis.com/envoy.extensions.compression.${type}.decompressor.v3.${type === 'gzip' ? 'Gzip' : 'Brotli'}` } });
const TEXT = 'hello, decompressed world! '.repeat(20);

before(async () => {
  // An upstream that records what it got and answers with a body compressed as the path says.
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      if (req.url === '/gzip') res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' }).end(gzipSync(TEXT));
      else if (req.url === '/br') res.writeHead(200, { 'content-encoding': 'br' }).end(brotliCompressSync(TEXT));
      else if (req.url === '/no-transform') res.writeHead(200, { 'content-encoding': 'gzip', 'cache-control': 'no-transform' }).end(gzipSync(TEXT));
      else if (req.url === '/bomb') res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(1 << 20)));
      else res.end('plain');
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const filters = [
    { name: 'gunzip', typed_config: { '@type': DECOMPRESSOR, decompressor_library: library('text', 'gzip') } },
    { name: 'unbrotli', typed_config: { '@type': DECOMPRESSOR, decompressor_library: library('text', 'brotli'), request_direction_config: { advertise_accept_encoding: false } } },
  ];
  proxy = await startProxy(filterBootstrap('inflate', filters, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], (upstream.address() as { port: number }).port), ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

interface Result {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  error?: string;
}

function send(path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<Result> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: proxy.ports.get('inflate'), path, method: body ? 'POST' : 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', (err) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), error: err.message }));
    });
    req.on('error', (err) => resolve({ status: 0, headers: {}, body: Buffer.alloc(0), error: err.message }));
    req.end(body);
  });
}

const stat = (name: string) => statValue(proxy, `http.inflate.decompressor.text.${name}`);

describe('the decompressor filter', () => {
  it("decompresses a gzip request body on its way upstream: the coding taken off, the client's content-length gone", async () => {
    const r = await send('/', { 'content-encoding': 'gzip, identity' }, gzipSync(TEXT));
    assert.equal(r.status, 200);
    const got = seen.at(-1)!;
    assert.deepEqual([got.body, got.headers['content-encoding']], [TEXT, 'identity']);
    // The client's (compressed) length is gone; a length the proxy knew once the body had all come is the body's own.
    assert.ok(got.headers['content-length'] === undefined || got.headers['content-length'] === String(TEXT.length), `content-length ${String(got.headers['content-length'])}`);
    assert.equal(await stat('gzip.request.decompressed'), 1);
    assert.equal(await stat('gzip.request.total_uncompressed_bytes'), TEXT.length);
  });

  it('advertises the response decompressor\'s encoding upstream (the gzip one; the brotli one was told not to)', async () => {
    await send('/', { 'accept-encoding': 'deflate' });
    assert.equal(seen.at(-1)!.headers['accept-encoding'], 'deflate,gzip');
  });

  it('decompresses gzip and brotli responses for the client, unless the response says no-transform', async () => {
    for (const path of ['/gzip', '/br']) {
      const r = await send(path);
      assert.deepEqual([r.body.toString(), r.headers['content-encoding']], [TEXT, undefined], path);
    }
    const kept = await send('/no-transform');
    assert.equal(kept.headers['content-encoding'], 'gzip');
    assert.equal(await stat('gzip.response.decompressed'), 1);
    assert.equal(await stat('brotli.response.decompressed'), 1);
  });

  it('refuses output past max_inflate_ratio: the response is cut short, not inflated to a megabyte', async () => {
    const r = await send('/bomb');
    assert.ok(r.error !== undefined || r.body.length < 1 << 20, 'the client never gets the whole inflated body');
  });
});
