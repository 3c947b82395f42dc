import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { filterBootstrap, staticCluster } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/** request_mirror_policies as Envoy's: a mirror backend receives the shadow requests, bodies too; the client never waits for it. */

const tmp = tempDir();
let upstream: Upstream;
let shadow: Server;
let proxy: RunningProxy;
const shadowed: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];

before(async () => {
  upstream = await startUpstream('A');
  // The mirror answers 500 after a while: neither the status nor the wait reaches the client.
  shadow = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      shadowed.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      setTimeout(() => res.writeHead(500).end('mirror failed'), 50);
    });
  });
  await new Promise<void>((resolve) => shadow.listen(0, '127.0.0.1', resolve));
  const echo = { regex_rewrite: { pattern: { regex: '^/[a-z]+' }, substitution: '/echo' } };
  const routes = [
    { match: { prefix: '/never' }, route: { cluster: 'backend', ...echo, request_mirror_policies: [{ cluster: 'shadow', runtime_fraction: { default_value: { numerator: 0 } } }] } },
    { match: { prefix: '/byheader' }, route: { cluster: 'backend', ...echo, request_mirror_policies: [{ cluster_header: 'x-mirror-to', disable_shadow_host_suffix_append: true }] } },
    { match: { prefix: '/' }, route: { cluster: 'backend', ...echo, request_mirror_policies: [{ cluster: 'shadow' }] } },
  ];
  const bootstrap = filterBootstrap('mirrored', [], routes, upstream.port);
  (bootstrap.static_resources as { clusters: object[] }).clusters.push(staticCluster('shadow', (shadow.address() as { port: number }).port));
  proxy = await startProxy(bootstrap, ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  await new Promise<void>((resolve) => shadow.close(() => resolve()));
  tmp.cleanup();
});

const url = (path: string) => `http://127.0.0.1:${proxy.ports.get('mirrored')}${path}`;
const shadowOf = (id: string) => waitFor(`the shadow of ${id}`, () => shadowed.find((s) => s.headers['x-request-id'] === id));

describe('request mirroring', () => {
  it('sends a copy to the mirror cluster with -shadow on its host; the client gets the main answer', async () => {
    const r = await httpRequest(url('/get'), { headers: { 'x-request-id': 'get-1' } });
    assert.equal(r.status, 200);
    const copy = await shadowOf('get-1');
    assert.deepEqual([copy.method, copy.url, copy.headers.host], ['GET', '/echo', `127.0.0.1-shadow:${proxy.ports.get('mirrored')}`]);
    assert.equal(await waitFor('the shadow counted', async () => ((await statValue(proxy, 'cluster.shadow.upstream_rq_500')) === 1 ? true : undefined)), true);
  });

  it('mirrors the body too, streaming the main request as it comes', async () => {
    const r = await httpRequest(url('/post'), { method: 'POST', headers: { 'x-request-id': 'post-1', 'transfer-encoding': 'chunked' }, body: 'payload for both' });
    assert.equal((JSON.parse(r.body) as { body: string }).body, 'payload for both');
    assert.equal((await shadowOf('post-1')).body, 'payload for both');
  });

  it('abandons the copy of a body over 1 MiB, and the main request still gets all of it', async () => {
    const big = 'x'.repeat(1024 * 1024 + 10);
    const r = await httpRequest(url('/big'), { method: 'POST', headers: { 'x-request-id': 'big-1' }, body: big });
    assert.equal((JSON.parse(r.body) as { body: string }).body.length, big.length);
    assert.equal(await statValue(proxy, 'cluster.backend.retry_or_shadow_abandoned'), 1);
    assert.equal(shadowed.find((s) => s.headers['x-request-id'] === 'big-1'), undefined);
  });

  it('follows runtime_fraction (0%: no copy) and cluster_header (the host left as it was)', async () => {
    await httpRequest(url('/never'), { headers: { 'x-request-id': 'never-1' } });
    await httpRequest(url('/byheader'), { headers: { 'x-request-id': 'hdr-1', 'x-mirror-to': 'shadow' } });
    const copy = await shadowOf('hdr-1');
    assert.equal(copy.headers.host, `127.0.0.1:${proxy.ports.get('mirrored')}`);
    assert.equal(shadowed.find((s) => s.headers['x-request-id'] === 'never-1'), undefined);
  });
});

describe('request mirroring configuration', () => {
  it('refuses a mirror without a cluster, an unknown one, and trace_sampled by name', async () => {
    const routes = [{ match: { prefix: '/' }, route: { cluster: 'backend', request_mirror_policies: [{}, { cluster: 'nowhere' }, { cluster: 'backend', trace_sampled: false }] } }];
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad-mirror.json', JSON.stringify(filterBootstrap('bad', [], routes, 1)))]);
    assert.equal(out.code, 1);
    const text = out.stderr + out.stdout;
    assert.match(text, /request_mirror_policies\[0\]: one of cluster and cluster_header is required/);
    assert.match(text, /request_mirror_policies\[1\]\.cluster: route: unknown mirror cluster 'nowhere'/);
    assert.match(text, /field 'trace_sampled' of envoy\.config\.route\.v3\.RouteAction\.RequestMirrorPolicy is not supported by this proxy \(this proxy does not trace yet\)/);
  });
});
