import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { filterBootstrap } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, stallProcess, startProxy, statValue, stopAllProxies, waitFor } from './helpers/proxy.js';
import { tickMs, watchdogConfigs } from '../supervisor/watchdog.js';

/**
 * The watchdogs (Bootstrap.watchdogs) on a real tree: a worker whose event loop stops turning (a
 * Lua script that never returns) is counted as a miss, then a mega-miss, then killed and replaced
 * at kill_timeout; the supervisor's own loop, stopped with SIGSTOP, counts its misses.
 */

const tmp = tempDir();
const LUA = 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua';

after(async () => {
  await stopAllProxies();
  tmp.cleanup();
});

const SPIN = `
function envoy_on_request(handle)
  if handle:headers():get(":path") == "/spin" then
    while true do end
  end
end
`;

describe('the worker watchdog', () => {
  it('counts a stuck worker loop as a miss and a mega-miss, then kills and replaces the worker at kill_timeout', async () => {
    const lua = { name: 'envoy.filters.http.lua', typed_config: { '@type': LUA, default_source_code: { inline_string: SPIN } } };
    const bootstrap = filterBootstrap('dog', [lua], [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'turning' } } }], 1, {}, {
      watchdogs: { worker_watchdog: { miss_timeout: '0.1s', megamiss_timeout: '0.3s', kill_timeout: '1s' } },
    });
    const proxy = await startProxy(bootstrap, ['--concurrency', '1']);
    const url = `http://127.0.0.1:${proxy.ports.get('dog')}`;
    const before = proxy.children();
    await assert.rejects(httpRequest(`${url}/spin`), 'the stuck worker dies under the request');
    await waitFor('the stuck worker replaced', () => {
      const now = proxy.children();
      return now.length === before.length && now.some((pid) => !before.includes(pid)) ? true : undefined;
    });
    await waitFor('the replacement serving', async () => ((await httpRequest(`${url}/`).catch(() => undefined))?.body === 'turning' ? true : undefined));
    assert.ok((await statValue(proxy, 'server.watchdog_miss')) >= 1);
    assert.ok((await statValue(proxy, 'server.workers.watchdog_mega_miss')) >= 1);
    assert.match(proxy.output(), /worker_0's event loop has not turned for \d+ ms \(kill_timeout 1000 ms\): killing it/);
  });
});

describe('the main thread watchdog', () => {
  it("counts the supervisor's own stalls (server.main_thread.watchdog_miss)", async () => {
    const bootstrap = filterBootstrap('main', [], [{ match: { prefix: '/' }, direct_response: { status: 200 } }], 1, {}, {
      watchdogs: { main_thread_watchdog: { miss_timeout: '0.1s', megamiss_timeout: '0.2s' } },
    });
    const proxy = await startProxy(bootstrap, ['--concurrency', '1']);
    await stallProcess(proxy.pid, 400);
    await waitFor('the stall counted', async () => ((await statValue(proxy, 'server.main_thread.watchdog_mega_miss')) >= 1 ? true : undefined));
    assert.ok((await statValue(proxy, 'server.main_thread.watchdog_miss')) >= 1);
  });

  it('with a kill_timeout, leaves a supervisor whose loop turns alone (its ticks stamp the time the abort thread reads)', async () => {
    const bootstrap = filterBootstrap('alive', [], [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'alive' } } }], 1, {}, {
      watchdogs: { main_thread_watchdog: { miss_timeout: '0.1s', kill_timeout: '0.3s' } },
    });
    const proxy = await startProxy(bootstrap, ['--concurrency', '1']);
    // A pause that proves an absence: five kill_timeouts pass, and the helper thread does not abort the supervisor.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('alive')}/`)).body, 'alive');
    assert.equal((await httpRequest(`http://${proxy.admin}/ready`)).body, 'LIVE\n');
    assert.doesNotMatch(proxy.output(), /aborting/);
  });

  it('refuses watchdog and watchdogs together, and watchdog actions, by name', async () => {
    const config = (extra: object) => filterBootstrap('both', [], [{ match: { prefix: '/' }, direct_response: { status: 200 } }], 1, {}, extra);
    const both = await runProxy(['--mode', 'validate', '-c', tmp.file('both.json', JSON.stringify(config({ watchdog: {}, watchdogs: {} })))]);
    assert.equal(both.code, 1);
    assert.match(both.stderr, /watchdogs: only one of watchdog or watchdogs should be set/);
    const actions = { worker_watchdog: { actions: [{ event: 'KILL', config: { name: 'x', typed_config: { '@type': 'type.googleapis.com/google.protobuf.Empty' } } }] } };
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('actions.json', JSON.stringify(config({ watchdogs: actions })))]);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /worker_watchdog\.actions: field 'actions' of envoy\.config\.bootstrap\.v3\.Watchdog is not supported/);
  });
});

describe('how often the watchdogs tick', () => {
  it('at half the shortest timeout set, at least 10 ms; every second when none is', () => {
    assert.equal(tickMs(watchdogConfigs({}).workers), 100, "Envoy's defaults: 200 ms miss");
    assert.equal(tickMs(watchdogConfigs({ watchdog: { miss_timeout: '1s', megamiss_timeout: '2s', kill_timeout: '0.5s' } }).main), 250);
    assert.equal(tickMs(watchdogConfigs({ watchdog: { miss_timeout: '0.004s' } }).main), 10);
    assert.equal(tickMs(watchdogConfigs({ watchdogs: { worker_watchdog: { miss_timeout: '0s', megamiss_timeout: '0s' } } }).workers), 1000);
  });
});
