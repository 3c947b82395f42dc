import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { connect as h2connect, createServer as createH2Server, type ClientHttp2Stream, type ServerHttp2Stream } from 'node:http2';
import { connect } from 'node:net';
import { loadErrors, routesListener, staticCluster } from './helpers/bootstraps.js';
import { startProxy, statValue, stopAllProxies, waitFor, withDeadline, type RunningProxy } from './helpers/proxy.js';
import { tempDir } from './helpers/cli.js';

/**
 * reset_high_memory_stream, as Envoy's buffer_accounting_integration_test drives it: three
 * streams hold 4, 8 and 16 KiB in the proxy (minimum_account_to_track_power_of_two 13: classes
 * 0, 1 and 2). At a scaled state of 62 % the six largest classes are cleared, which resets the
 * largest stream only; at 75 % the medium one; the smallest then completes. Each reset counts in
 * `envoy.overload_actions.reset_high_memory_stream.count` and `downstream_rq_rx_reset`, and is
 * logged with flag OM. Once with the responses held for an HTTP/2 client whose window is closed,
 * once with HTTP/1.1 request bodies held for an HTTP/2 upstream whose window is closed.
 */

const INJECTED = 'type.googleapis.com/envoy.extensions.resource_monitors.injected_resource.v3.InjectedResourceConfig';
const H2_UPSTREAM = { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http2_protocol_options: {} } } };
const SIZES = [4096, 8192, 16384];
const RESETS = 'envoy.overload_actions.reset_high_memory_stream.count';

after(() => stopAllProxies());

function bootstrap(pressureFile: string, accessLog: string, upstreamPort: number, h2Upstream: boolean): object {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    overload_manager: {
      refresh_interval: '0.05s',
      buffer_factory_config: { minimum_account_to_track_power_of_two: 13 },
      resource_monitors: [{ name: 'envoy.resource_monitors.injected_resource', typed_config: { '@type': INJECTED, filename: pressureFile } }],
      actions: [{ name: 'envoy.overload_actions.reset_high_memory_stream', triggers: [{ name: 'envoy.resource_monitors.injected_resource', scaled: { scaling_threshold: 0.9, saturation_threshold: 0.98 } }] }],
    },
    static_resources: {
      listeners: [routesListener('edge', [{ match: { prefix: '/' }, route: { cluster: 'up', timeout: '0s' } }], 0, {
        hcm: { access_log: [{ name: 'envoy.access_loggers.file', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog', path: accessLog, log_format: { text_format: '%REQ(:PATH)% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS%\n' } } }] },
      })],
      clusters: [{ ...staticCluster('up', upstreamPort), ...(h2Upstream ? { typed_extension_protocol_options: H2_UPSTREAM } : {}) }],
    },
  };
}

describe('reset_high_memory_stream', () => {
  const tmp = tempDir('overload-reset-');
  after(() => tmp.cleanup());
  const pressureFile = `${tmp.dir}/pressure`;

  const pressure = async (proxy: RunningProxy, value: string, scalePercent: number) => {
    writeFileSync(pressureFile, value);
    await waitFor(`scale ${scalePercent}`, async () => ((await statValue(proxy, 'overload.envoy.overload_actions.reset_high_memory_stream.scale_percent')) === scalePercent ? true : undefined));
  };
  const resetsReach = (proxy: RunningProxy, n: number) =>
    waitFor(`${n} resets`, async () => ((await statValue(proxy, RESETS)) >= n && (await statValue(proxy, 'http.edge.downstream_rq_rx_reset')) >= n ? true : undefined));

  it('resets the streams whose responses take the most memory, largest first', async () => {
    writeFileSync(pressureFile, '0');
    const accessLog = `${tmp.dir}/responses.log`;
    // Each response: its head and its size of body, and no end until the test says so.
    const held = new Map<string, ServerResponse>();
    const closedUpstream = new Map<string, Promise<void>>();
    const upstream = createServer((req, res) => {
      held.set(req.url!, res);
      closedUpstream.set(req.url!, new Promise((resolve) => res.once('close', () => resolve())));
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(Number(req.url!.slice(1)), 'a'));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const proxy = await startProxy(bootstrap(pressureFile, accessLog, (upstream.address() as { port: number }).port, false), ['--concurrency', '1', '--file-flush-interval-msec', '50']);
    // A client that takes no data yet: the responses wait in the proxy.
    const client = h2connect(`http://127.0.0.1:${proxy.ports.get('edge')}`, { settings: { initialWindowSize: 0 } });
    client.on('error', () => undefined);
    try {
      const streams = new Map<number, { stream: ClientHttp2Stream; closed: Promise<number>; body: () => number }>();
      for (const size of SIZES) {
        const stream = client.request({ ':path': `/${size}` });
        let got = 0;
        stream.on('data', (d: Buffer) => (got += d.length));
        stream.on('error', () => undefined);
        const closed = new Promise<number>((resolve) => stream.once('close', () => resolve(stream.rstCode ?? -1)));
        await withDeadline(`the /${size} response`, new Promise((resolve) => stream.once('response', resolve)));
        streams.set(size, { stream, closed, body: () => got });
      }
      let mediumClosed = false;
      void streams.get(8192)!.closed.then(() => (mediumClosed = true));

      await pressure(proxy, '0.95', 62);
      await resetsReach(proxy, 1);
      assert.equal(await withDeadline('the largest stream reset', streams.get(16384)!.closed), 0, 'RST_STREAM NO_ERROR, as Envoy resets for the overload manager');
      await withDeadline('its upstream request cancelled', closedUpstream.get('/16384')!);
      assert.equal(mediumClosed, false);
      assert.equal(await statValue(proxy, RESETS), 1);

      await pressure(proxy, '0.96', 75);
      await resetsReach(proxy, 2);
      assert.equal(await withDeadline('the medium stream reset', streams.get(8192)!.closed), 0);

      await pressure(proxy, '0.80', 0);
      // The client opens its window and the upstream ends the smallest response: it completes whole.
      client.settings({ initialWindowSize: 65535 });
      held.get('/4096')!.end('end');
      assert.equal(await withDeadline('the smallest stream completed', streams.get(4096)!.closed), 0);
      assert.equal(streams.get(4096)!.body(), 4096 + 3);
      assert.equal(await statValue(proxy, RESETS), 2);
      const lines = await waitFor('the access log', () => {
        const text = readFileSync(accessLog, 'utf8');
        return text.split('\n').filter(Boolean).length === 3 ? text : undefined;
      });
      assert.match(lines, /^\/16384 OM overload$/m);
      assert.match(lines, /^\/8192 OM overload$/m);
      assert.match(lines, /^\/4096 - via_upstream$/m);
    } finally {
      client.destroy();
      for (const res of held.values()) res.destroy();
      upstream.close();
      await proxy.stop();
    }
  });

  it('resets the streams whose request bodies take the most memory (HTTP/1.1 closes the connection)', async () => {
    writeFileSync(pressureFile, '0');
    // An upstream that takes no request body until the test says so.
    const upstream = createH2Server({ settings: { initialWindowSize: 0 } });
    const arrived = new Map<string, ServerHttp2Stream>();
    upstream.on('stream', (stream, headers) => {
      arrived.set(String(headers[':path']), stream);
      stream.on('error', () => undefined);
      let got = 0;
      stream.on('data', (d: Buffer) => (got += d.length));
      stream.on('end', () => {
        if (stream.destroyed) return;
        stream.respond({ ':status': 200 });
        stream.end(`got ${got}`);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const proxy = await startProxy(bootstrap(pressureFile, `${tmp.dir}/requests.log`, (upstream.address() as { port: number }).port, true), ['--concurrency', '1']);
    const conns = new Map<number, { closed: Promise<string> }>();
    try {
      for (const size of SIZES) {
        const s = connect(proxy.ports.get('edge')!, '127.0.0.1');
        let reply = '';
        s.on('data', (d) => (reply += d));
        s.on('error', () => undefined);
        conns.set(size, { closed: new Promise((resolve) => s.once('close', () => resolve(reply))) });
        s.write(`POST /${size} HTTP/1.1\r\nhost: x\r\ncontent-length: ${size}\r\nconnection: close\r\n\r\n`);
        s.write(Buffer.alloc(size, 'b'));
        await waitFor(`the /${size} request upstream`, () => (arrived.has(`/${size}`) ? true : undefined));
      }

      await pressure(proxy, '0.95', 62);
      await resetsReach(proxy, 1);
      assert.equal(await withDeadline('the largest connection closed', conns.get(16384)!.closed), '', 'closed unanswered');
      await pressure(proxy, '0.96', 75);
      await resetsReach(proxy, 2);
      assert.equal(await withDeadline('the medium connection closed', conns.get(8192)!.closed), '');

      await pressure(proxy, '0.80', 0);
      // The upstream opens its window: the smallest body arrives whole and is answered.
      for (const session of new Set([...arrived.values()].map((s) => s.session))) session?.settings({ initialWindowSize: 65535 });
      assert.match(await withDeadline('the smallest answered', conns.get(4096)!.closed), /^HTTP\/1\.1 200 [^]*\r\ngot 4096\r\n/);
      assert.equal(await statValue(proxy, RESETS), 2);
    } finally {
      for (const s of arrived.values()) s.close();
      upstream.close();
      await proxy.stop();
    }
  });

  it('is refused without buffer_factory_config, in Envoy words', () => {
    const messages = loadErrors({
      overload_manager: {
        resource_monitors: [{ name: 'envoy.resource_monitors.injected_resource', typed_config: { '@type': INJECTED, filename: pressureFile } }],
        actions: [{ name: 'envoy.overload_actions.reset_high_memory_stream', triggers: [{ name: 'envoy.resource_monitors.injected_resource', threshold: { value: 0.9 } }] }],
      },
    }).map(String).join('\n');
    assert.match(messages, /Overload action "envoy\.overload_actions\.reset_high_memory_stream" requires buffer_factory_config\./);
    const low = loadErrors({ overload_manager: { buffer_factory_config: { minimum_account_to_track_power_of_two: 5 } } }).map(String).join('\n');
    assert.match(low, /minimum_account_to_track_power_of_two/);
  });
});
