import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runProxy } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * `admin.allow_paths` (Envoy 1.37): with matchers configured, the admin answers only requests
 * whose whole path, query string included, one of them takes; anything else is 403
 * `request to path <path> not allowed`, checked before the handler lookup, so an unknown path
 * outside the list is 403 rather than 404, and a mutating endpoint outside it never runs.
 */

let proxy: RunningProxy;
const admin = (path: string, method = 'GET') => httpRequest(`http://${proxy.admin}${path}`, { method });

before(async () => {
  proxy = await startProxy(
    {
      admin: {
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        // The test helper reads /listeners?format=json for the ports.
        allow_paths: [{ exact: '/ready' }, { exact: '/listeners?format=json' }, { prefix: '/stats' }, { safe_regex: { regex: '^/server_info(\\?.*)?$' } }, { exact: '/HELP', ignore_case: true }],
      },
      static_resources: { listeners: [], clusters: [] },
    },
    ['--concurrency', '1'],
  );
});

after(() => stopAllProxies());

describe('admin.allow_paths', () => {
  it('serves the paths a matcher takes, query strings included', async () => {
    assert.equal((await admin('/ready')).status, 200);
    assert.equal((await admin('/stats?filter=server.live')).status, 200);
    assert.match((await admin('/stats?filter=server.live')).body, /^server\.live: 1$/m);
    assert.equal((await admin('/server_info')).status, 200);
    assert.equal((await admin('/help')).status, 200, 'ignore_case');
  });

  it('answers 403 with the whole path for anything else, before 404 and before a mutation', async () => {
    const exactWithQuery = await admin('/ready?x=1');
    assert.equal(exactWithQuery.status, 403, 'an exact matcher does not take a query string');
    assert.equal(exactWithQuery.body, 'request to path /ready?x=1 not allowed');
    assert.match(String(exactWithQuery.headers['content-type']), /^text\/plain/);
    const unknown = await admin('/no_such_endpoint');
    assert.equal(unknown.status, 403);
    assert.equal(unknown.body, 'request to path /no_such_endpoint not allowed');
    const quit = await admin('/quitquitquit', 'POST');
    assert.equal(quit.status, 403);
    assert.equal((await admin('/ready')).status, 200, 'still running');
    assert.equal((await admin('/stats?filter=^http\\.admin\\.downstream_rq_4xx$')).body.trim(), 'http.admin.downstream_rq_4xx: 3');
  });
});

describe('admin.allow_paths validation', () => {
  it('refuses a matcher with no pattern by name', async () => {
    const run = await runProxy(['--mode', 'validate', '--config-yaml', JSON.stringify({ admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, allow_paths: [{}] } })]);
    assert.equal(run.code, 1);
    assert.match(run.stderr + run.stdout, /allow_paths/);
  });
});
