import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { filterBootstrap } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * RouteAction.idle_timeout, as Envoy's router sets it (setIdleTimeout): once a request is routed,
 * its stream's idle timeout is the route's, in place of the connection manager's
 * stream_idle_timeout (408 "stream timeout", flag SI); 0 turns it off for that route.
 */

let upstream: Upstream;
let proxy: RunningProxy;

before(async () => {
  upstream = await startUpstream('A');
  const routes = [
    { match: { prefix: '/short' }, route: { cluster: 'backend', prefix_rewrite: '/hold', idle_timeout: '0.2s', timeout: '0s' } },
    { match: { prefix: '/none' }, route: { cluster: 'backend', prefix_rewrite: '/hold', idle_timeout: '0s', timeout: '0s' } },
  ];
  const bootstrap = filterBootstrap('idle', [], routes, upstream.port);
  (bootstrap.static_resources as any).listeners[0].filter_chains[0].filters[0].typed_config.stream_idle_timeout = '0.5s';
  proxy = await startProxy(bootstrap, ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

describe("a route's idle_timeout", () => {
  it('answers 408 when the stream is idle that long', async () => {
    const started = performance.now();
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('idle')}/short?key=short`);
    assert.deepEqual([r.status, r.body], [408, 'stream timeout']);
    assert.ok(performance.now() - started < 5000);
    assert.equal(await statValue(proxy, 'http.idle.downstream_rq_idle_timeout'), 1);
  });

  it("at 0, turns the connection manager's stream_idle_timeout off for the route", async () => {
    const pending = httpRequest(`http://127.0.0.1:${proxy.ports.get('idle')}/none?key=none`);
    await waitFor('the request to reach the upstream', () => (upstream.held('none') === 1 ? true : undefined));
    // Past the connection manager's 0.5 s: the request is still waiting, not answered 408.
    const past = performance.now() + 1200;
    await waitFor('1.2 s to pass', () => (performance.now() > past ? true : undefined));
    assert.equal(upstream.held('none'), 1);
    upstream.release('none');
    const r = await pending;
    assert.deepEqual([r.status, r.body], [200, 'A held']);
  });
});
