import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { filterBootstrap } from './helpers/bootstraps.js';
import { startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/** The buffer filter (envoy.filters.http.buffer) as Envoy's: whole bodies upstream, 413 past the limit, per-route settings. */

let upstream: Upstream;
let proxy: RunningProxy;
const BUFFER = 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.Buffer';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.BufferPerRoute';

before(async () => {
  upstream = await startUpstream('A');
  const echo = { cluster: 'backend', prefix_rewrite: '/echo' };
  const routes = [
    { match: { prefix: '/streamed' }, route: echo, typed_per_filter_config: { 'envoy.filters.http.buffer': { '@type': PER_ROUTE, disabled: true } } },
    { match: { prefix: '/large' }, route: echo, typed_per_filter_config: { 'envoy.filters.http.buffer': { '@type': PER_ROUTE, buffer: { max_request_bytes: 1000 } } } },
    { match: { prefix: '/' }, route: echo },
  ];
  proxy = await startProxy(filterBootstrap('buffered', [{ name: 'envoy.filters.http.buffer', typed_config: { '@type': BUFFER, max_request_bytes: 16 } }], routes, upstream.port), ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

interface Sent {
  status: number;
  body: string;
  /** The upstream's view, for requests it got. */
  echoed?: { headers: Record<string, string>; body: string };
  closed: boolean;
}

/** A POST whose body goes in `chunks` (chunked unless `length` is given), one write per chunk. */
function post(path: string, chunks: string[], length?: number): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = length !== undefined ? { 'content-length': String(length) } : {};
    const req = request({ host: '127.0.0.1', port: proxy.ports.get('buffered'), path, method: 'POST', headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => {
        const echoed = res.statusCode === 200 ? (JSON.parse(body) as { headers: Record<string, string>; body: string }) : undefined;
        resolve({ status: res.statusCode ?? 0, body, ...(echoed ? { echoed } : {}), closed: res.headers.connection === 'close' });
      });
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe('the buffer filter', () => {
  it('sends a chunked body upstream whole, with its content-length', async () => {
    const r = await post('/', ['hello ', 'world']);
    assert.equal(r.status, 200);
    assert.deepEqual([r.echoed!.body, r.echoed!.headers['content-length'], r.echoed!.headers['transfer-encoding']], ['hello world', '11', undefined]);
  });

  it('answers 413 to a body over max_request_bytes, by its content-length or as it arrives, and closes the connection', async () => {
    const declared = await post('/', ['x'.repeat(17)], 17);
    assert.deepEqual([declared.status, declared.body, declared.closed], [413, 'Payload Too Large', true]);
    const chunked = await post('/', ['x'.repeat(10), 'y'.repeat(10)]);
    assert.deepEqual([chunked.status, chunked.body], [413, 'Payload Too Large']);
    assert.equal(await statValue(proxy, 'http.buffered.downstream_rq_too_large'), 2);
  });

  it("follows a route's BufferPerRoute: its own limit, or none at all", async () => {
    const large = await post('/large', ['z'.repeat(500)]);
    assert.deepEqual([large.status, large.echoed!.body.length, large.echoed!.headers['content-length']], [200, 500, '500']);
    // Switched off there: a body over the filter's 16 bytes goes through.
    const streamed = await post('/streamed', ['a'.repeat(20), 'b'.repeat(20)]);
    assert.deepEqual([streamed.status, streamed.echoed!.body], [200, 'a'.repeat(20) + 'b'.repeat(20)]);
  });
});
