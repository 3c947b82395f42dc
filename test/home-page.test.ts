import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { minimalBootstrap, staticCluster } from './helpers/bootstraps.js';
import { tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * The admin home page in a real browser (Debian's chromium, driven by playwright-core): what a
 * person sees: the live figures filling in and following the traffic, the plots moving with it
 * (a screenshot is saved; HOME_PAGE_SCREENSHOT=<file> keeps it), the endpoints as links and
 * forms, and a POST form changing the server (health checks failed, then restored).
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `no browser at ${CHROMIUM} (apt-get install chromium; .ci/run installs it when it runs as root)`;

let upstream: Upstream;
let proxy: RunningProxy;
let browser: Browser | undefined;
let page: Page;

before(async () => {
  if (skip) return;
  upstream = await startUpstream('A');
  const d = minimalBootstrap() as Record<string, any>;
  d.admin.address.socket_address.port_value = 0;
  // A point on the plots at every flush: a quarter second, so they move within the test.
  d.stats_flush_interval = '0.25s';
  d.static_resources.listeners[0].address.socket_address.port_value = 0;
  d.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = upstream.port;
  proxy = await startProxy(d, ['--concurrency', '2']);
  // Root (as in CI containers) cannot use Chromium's sandbox.
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  page = await browser.newPage();
});

after(async () => {
  await browser?.close();
  await stopAllProxies();
  await upstream?.close();
});

const figure = async (id: string) => (await page.locator(`#${id}`).textContent())?.trim() ?? '';

describe('the admin home page in a browser', { skip }, () => {
  it('shows the live state, requests, connections and hosts, and follows the traffic', async () => {
    await page.goto(`http://${proxy.admin}/`);
    assert.equal(await page.title(), 'Envoy Admin');
    await page.locator('#live-state', { hasText: 'LIVE' }).waitFor();
    await page.locator('#live-hosts tbody tr', { hasText: 'backend' }).waitFor();
    assert.equal((await page.locator('#live-hosts tbody tr', { hasText: 'backend' }).locator('td').nth(1).textContent())?.trim(), '1 / 1');
    assert.equal(await figure('live-error'), '');

    const url = `http://127.0.0.1:${proxy.ports.get('ingress')}/`;
    for (let i = 0; i < 30; i += 10) await Promise.all(Array.from({ length: 10 }, () => httpRequest(url)));
    await waitFor('the page to count 30 requests', async () => (Number(await figure('live-requests')) >= 30 ? true : undefined));
    assert.ok(Number(await figure('live-connections')) >= 1);
    assert.equal(await figure('live-requests-active'), '0');
    // "Per second" is the rate plot's latest point: the two figures agree.
    await waitFor('the two rates', async () => ((await figure('live-rps')) !== '–' ? true : undefined));
    assert.equal(await figure('live-rps'), await figure('plot-rps-now0'));
    // The node, and the listeners with their addresses.
    assert.equal(await figure('live-node'), 'node-1 (cluster cluster-1)');
    const row = page.locator('#live-listeners tbody tr', { hasText: 'ingress' });
    await row.waitFor();
    assert.equal((await row.locator('td').nth(1).textContent())?.trim(), `127.0.0.1:${proxy.ports.get('ingress')}`);
    assert.equal(await page.locator('#live-drain').isHidden(), true, 'not draining: no reason shown');
  });

  it('plots the last minutes, the plots move with the traffic, and the hot-restart phase shows', async () => {
    await page.goto(`http://${proxy.admin}/`);
    await page.locator('#live-restart', { hasText: 'Hot restart: Epoch 0, live' }).waitFor();
    const points = (id: string) => page.locator(`#${id}`).getAttribute('points');
    // Two flushes make a rate: the request-rate line has points (at 0 before any traffic).
    const before = await waitFor('the request-rate line', async () => ((await points('plot-rps-line0'))?.split(' ').length ?? 0) >= 2 && (await points('plot-rps-line0')));
    const url = `http://127.0.0.1:${proxy.ports.get('ingress')}/`;
    // Traffic until the page's latest rate is above zero (each probe sends a batch).
    await waitFor('the plotted request rate to rise', async () => {
      await Promise.all(Array.from({ length: 20 }, () => httpRequest(url)));
      return Number(await figure('plot-rps-now0')) > 0 || undefined;
    });
    assert.notEqual(await points('plot-rps-line0'), before, 'the line moved');
    assert.ok(((await points('plot-latency-line0')) ?? '').length > 0, 'p50 plotted');
    assert.ok(((await points('plot-latency-line1')) ?? '').length > 0, 'p99 plotted');
    assert.match(await figure('plot-latency-now1'), /^\d+(\.\d)?$/);
    assert.match(await figure('plot-connections-now0'), /^\d+$/);
    assert.equal(await figure('plot-5xx-now0'), '0.0');
    assert.match(await figure('plot-rps-span'), /^last \d+ min$/);
    // The y axis's top is a round number at least the largest value plotted.
    assert.ok(Number(await figure('plot-rps-max')) >= Number(await figure('plot-rps-now0')));
    // The y values are inside the 90-unit-high box.
    for (const xy of ((await points('plot-rps-line0')) ?? '').split(' ')) {
      const [x, y] = xy.split(',').map(Number);
      assert.ok(x! >= 0 && x! <= 300 && y! >= 0 && y! <= 90, xy);
    }
    const tmp = tempDir();
    try {
      const shot = await page.screenshot({ path: process.env.HOME_PAGE_SCREENSHOT ?? join(tmp.dir, 'home.png') });
      assert.equal(shot.subarray(1, 4).toString(), 'PNG');
    } finally {
      tmp.cleanup();
    }
  });

  it('links every endpoint, with POST forms for the mutating ones', async () => {
    await page.goto(`http://${proxy.admin}/`);
    assert.equal(await page.locator("a[href='server_info']").textContent(), 'server_info');
    assert.equal(await page.locator('form#quitquitquit').getAttribute('method'), 'post');
    assert.equal(await page.locator('form#stats').getAttribute('method'), 'get');
    const help = (await httpRequest(`http://${proxy.admin}/help`)).body;
    const paths = [...help.matchAll(/^ {2}\/(\S*?)(?: \(POST\))?:/gm)].map((m) => m[1]!).filter((p) => p !== '');
    for (const p of paths) assert.equal(await page.locator(`a[href='${p}'], form[action='${p}']`).count(), 1, `the page lacks ${p}`);
  });

  it('submits a GET form with its parameters', async () => {
    await page.goto(`http://${proxy.admin}/`);
    await page.locator("input[form='stats'][name='filter']").fill('^server\\.live$');
    await page.locator('form#stats button').click();
    await page.waitForURL(/\/stats\?/);
    assert.equal((await page.locator('body').textContent())?.trim(), 'server.live: 1');
  });

  it('fails health checks with the POST form, and the live state shows it', async () => {
    await page.goto(`http://${proxy.admin}/`);
    await page.locator("form[action='healthcheck/fail'] button").click();
    await page.waitForURL(/healthcheck\/fail$/);
    assert.equal((await page.locator('body').textContent())?.trim(), 'OK');
    assert.equal((await httpRequest(`http://${proxy.admin}/ready`)).body, 'DRAINING\n');
    await page.goto(`http://${proxy.admin}/`);
    await page.locator('#live-state', { hasText: 'DRAINING' }).waitFor();
    // And why, with what undoes it.
    await page.locator('#live-drain', { hasText: 'Draining: health checks failed (POST /healthcheck/fail; /healthcheck/ok restores them)' }).waitFor();
    await page.locator("form[action='healthcheck/ok'] button").click();
    await page.waitForURL(/healthcheck\/ok$/);
    await page.goto(`http://${proxy.admin}/`);
    await page.locator('#live-state', { hasText: 'LIVE' }).waitFor();
  });
});

describe('the home page during a hot restart', { skip }, () => {
  it("shows the new epoch's phase and the parent's terminate deadline, highlighted", async () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.admin.address.socket_address.port_value = 0;
    d.static_resources.listeners[0].address.socket_address.port_value = 0;
    d.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = upstream.port;
    const common = ['--socket-path', `@proxy_home_page_test_${process.pid}`, '--concurrency', '1', '--parent-shutdown-time-s', '30'];
    const e0 = await startProxy(d, common);
    const e1 = await startProxy(d, [...common, '--base-id', String(e0.baseId), '--restart-epoch', '1']);
    try {
      await page.goto(`http://${e1.admin}/`);
      const restart = page.locator('#live-restart');
      await restart.filter({ hasText: /^Hot restart: Epoch 1, live; parent draining, terminated in \d+ s \(at .+\)$/ }).waitFor();
      assert.equal(await restart.getAttribute('class'), 'draining');
    } finally {
      await e1.stop();
      await e0.stop();
    }
  });
});

describe('the home page\'s dynamic resources', { skip }, () => {
  it('lists each resource from dynamic configuration with its version and state, and a refusal in red with why', async () => {
    const tmp = tempDir();
    try {
      const cdsPath = join(tmp.dir, 'cds.json');
      const cluster = (name: string, extra: object = {}) => ({ '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', ...staticCluster(name, upstream.port), ...extra });
      writeFileSync(cdsPath, JSON.stringify({ version_info: 'v7', resources: [cluster('served'), cluster('refused', { lb_policy: 'CLUSTER_PROVIDED' })] }));
      const dynamic = await startProxy(
        { admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }, dynamic_resources: { cds_config: { path_config_source: { path: cdsPath }, resource_api_version: 'V3' } } },
        ['--concurrency', '1'],
      );
      await page.goto(`http://${dynamic.admin}/`);
      const served = page.locator('#live-xds tbody tr', { hasText: 'cluster served' });
      await served.waitFor();
      assert.deepEqual((await served.locator('td').allTextContents()).slice(0, 3), ['cluster served', 'active', 'v7']);
      const refused = page.locator('#live-xds tbody tr', { hasText: 'cluster refused' });
      assert.equal(await refused.getAttribute('class'), 'unhealthy');
      assert.match((await refused.locator('td').nth(4).textContent()) ?? '', /lb_policy: CLUSTER_PROVIDED is not supported/);
      // The version of each xDS type, above the resources.
      await page.locator('#live-versions', { hasText: 'Versions: cluster v7' }).waitFor();
      await dynamic.stop();
    } finally {
      tmp.cleanup();
    }
  });
});
