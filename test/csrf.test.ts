import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { filterBootstrap } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/** The CSRF filter (envoy.filters.http.csrf) as Envoy's: state-changing requests must come from their own origin. */

let upstream: Upstream;
let proxy: RunningProxy;
const CSRF = 'type.googleapis.com/envoy.extensions.filters.http.csrf.v3.CsrfPolicy';

before(async () => {
  upstream = await startUpstream('A');
  const routes = [
    // Shadow only: counted, never refused.
    { match: { prefix: '/shadow' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.csrf': { '@type': CSRF, filter_enabled: { default_value: { numerator: 0 } }, shadow_enabled: { default_value: { numerator: 100 } } } } },
    { match: { prefix: '/' }, route: { cluster: 'backend' } },
  ];
  const csrf = { name: 'envoy.filters.http.csrf', typed_config: { '@type': CSRF, filter_enabled: { default_value: { numerator: 100 } }, additional_origins: [{ suffix: '.trusted.example' }] } };
  proxy = await startProxy(
    filterBootstrap('app', [csrf], routes, upstream.port),
    ['--concurrency', '1'],
  );
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

const host = () => `127.0.0.1:${proxy.ports.get('app')}`;
const send = (path: string, method: string, headers: Record<string, string>) => httpRequest(`http://${host()}${path}`, { method, headers, body: method === 'GET' || method === 'DELETE' ? undefined : 'x' });
const stat = (name: string) => statValue(proxy, `http.app.csrf.${name}`);

describe('the CSRF filter', () => {
  it('lets a state-changing request from its own origin (Origin, else Referer) or an additional origin through', async () => {
    const own = await send('/', 'POST', { origin: `http://${host()}` });
    assert.equal(own.status, 200, own.body);
    assert.equal((await send('/', 'PUT', { referer: `http://${host()}/page?x=1` })).status, 200);
    assert.equal((await send('/', 'DELETE', { origin: 'https://b.trusted.example' })).status, 200);
    assert.equal(await stat('request_valid'), 3);
  });

  it('refuses one from another origin, or from none, with 403 "Invalid origin"; reads are not checked', async () => {
    const evil = await send('/', 'POST', { origin: 'https://evil.example' });
    assert.deepEqual([evil.status, evil.body], [403, 'Invalid origin']);
    const none = await send('/', 'PATCH', {});
    assert.equal(none.status, 403);
    assert.equal(await stat('missing_source_origin'), 1);
    assert.equal(await stat('request_invalid'), 2);
    assert.equal((await send('/', 'GET', { origin: 'https://evil.example' })).status, 200);
  });

  it('in shadow mode (a route\'s policy) counts an invalid request but lets it through', async () => {
    const before = await stat('request_invalid');
    assert.equal((await send('/shadow', 'POST', { origin: 'https://evil.example' })).status, 200);
    assert.equal(await stat('request_invalid'), before + 1);
  });
});
