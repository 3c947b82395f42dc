import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { connect as h2connect } from 'node:http2';
import { loadErrors, routesListener, staticCluster } from './helpers/bootstraps.js';
import { startProxy, statValue, stopAllProxies, waitFor, withDeadline, type RunningProxy } from './helpers/proxy.js';
import { tempDir } from './helpers/cli.js';

/**
 * reduce_timeouts, as Envoy's overload_scaled_timer_integration_test drives it: the connection
 * manager's timers are configured long (an hour, a minute); with the pressure injected at
 * saturation they shrink to their min_timeout, including timers already running when the
 * pressure rises; idle HTTP/1.1 and HTTP/2 connections close (`downstream_cx_idle_timeout`), a
 * silent stream is answered 408 (`downstream_rq_idle_timeout`), a connection reaches its
 * max_connection_duration (`downstream_cx_max_duration_reached`).
 */

const INJECTED = 'type.googleapis.com/envoy.extensions.resource_monitors.injected_resource.v3.InjectedResourceConfig';
const SCALE_TIMERS = 'type.googleapis.com/envoy.config.overload.v3.ScaleTimersOverloadActionConfig';
const trigger = [{ name: 'envoy.resource_monitors.injected_resource', threshold: { value: 0.9 } }];

after(() => stopAllProxies());

describe('reduce_timeouts', () => {
  const tmp = tempDir('overload-timeouts-');
  after(() => tmp.cleanup());
  const pressureFile = `${tmp.dir}/pressure`;
  let proxy: RunningProxy;
  let silent: Server;
  const held: Socket[] = [];

  const overloadManager = (timers: object[]) => ({
    refresh_interval: '0.05s',
    resource_monitors: [{ name: 'envoy.resource_monitors.injected_resource', typed_config: { '@type': INJECTED, filename: pressureFile } }],
    actions: [{ name: 'envoy.overload_actions.reduce_timeouts', triggers: trigger, typed_config: { '@type': SCALE_TIMERS, timer_scale_factors: timers } }],
  });

  before(async () => {
    writeFileSync(pressureFile, '0');
    // An upstream that takes requests and never answers.
    silent = createServer((s) => {
      held.push(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const answer = { match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } };
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      overload_manager: overloadManager([
        { timer: 'HTTP_DOWNSTREAM_CONNECTION_IDLE', min_timeout: '0.1s' },
        { timer: 'HTTP_DOWNSTREAM_STREAM_IDLE', min_scale: { value: 0 } },
        { timer: 'HTTP_DOWNSTREAM_CONNECTION_MAX', min_timeout: '0.2s' },
      ]),
      static_resources: {
        listeners: [
          routesListener('idle', [{ match: { prefix: '/silent' }, route: { cluster: 'silent', timeout: '0s' } }, answer], 0, {
            hcm: { common_http_protocol_options: { idle_timeout: '3600s' }, stream_idle_timeout: '60s' },
          }),
          routesListener('max', [answer], 0, { hcm: { common_http_protocol_options: { max_connection_duration: '3600s' } } }),
          { ...routesListener('bypass', [answer], 0, { hcm: { common_http_protocol_options: { idle_timeout: '3600s' } } }), bypass_overload_manager: true },
        ],
        clusters: [staticCluster('silent', (silent.address() as { port: number }).port)],
      },
    }, ['--concurrency', '1']);
  });

  after(() => {
    for (const s of held) s.destroy();
    silent.close();
  });

  const pressure = async (value: string, percent: number) => {
    writeFileSync(pressureFile, value);
    await waitFor(`pressure ${percent}`, async () => ((await statValue(proxy, 'overload.envoy.resource_monitors.injected_resource.pressure')) === percent ? true : undefined));
  };

  /**
   * An HTTP/1.1 keep-alive connection that has had one answer; `closed` settles when it closes (in
   * an object: a promise resolved with a promise would wait for the close itself).
   */
  const idleHttp1 = (port: number) =>
    new Promise<{ closed: Promise<void> }>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      const closed = new Promise<void>((done) => s.once('close', () => done()));
      s.once('data', () => resolve({ closed }));
      s.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    });

  it('an idle HTTP/1.1 connection, idle before the pressure rose, closes at the minimum once it does', async () => {
    const port = proxy.ports.get('idle')!;
    const { closed } = await idleHttp1(port);
    await pressure('1', 100);
    await withDeadline('the idle connection closed', closed);
    assert.equal(await statValue(proxy, 'http.idle.downstream_cx_idle_timeout'), 1);
    await pressure('0', 0);
  });

  it('an idle HTTP/2 connection drains (GOAWAY) once its last stream closed', async () => {
    await pressure('1', 100);
    const client = h2connect(`http://127.0.0.1:${proxy.ports.get('idle')}`);
    client.on('error', () => undefined);
    const goaway = new Promise<void>((resolve) => client.once('goaway', () => resolve()));
    const rq = client.request({ ':path': '/' });
    rq.resume();
    await new Promise((resolve) => rq.once('end', resolve));
    await withDeadline('the GOAWAY', goaway);
    assert.equal(await statValue(proxy, 'http.idle.downstream_cx_idle_timeout'), 2);
    client.destroy();
    await pressure('0', 0);
  });

  it('a listener bypassing the overload manager keeps its timers as configured', async () => {
    /** An HTTP/2 connection that has had one answer, and whether a GOAWAY came on it. */
    const h2 = async (port: number) => {
      const client = h2connect(`http://127.0.0.1:${port}`);
      client.on('error', () => undefined);
      const seen = { goaway: false, ready: new Promise<void>((resolve) => client.once('goaway', () => resolve())) };
      void seen.ready.then(() => (seen.goaway = true));
      await get(client);
      return { client, seen };
    };
    const get = (client: ReturnType<typeof h2connect>) =>
      new Promise<number>((resolve, reject) => {
        const rq = client.request({ ':path': '/' });
        let status = 0;
        rq.on('response', (h) => (status = Number(h[':status'])));
        rq.on('error', reject);
        rq.resume();
        rq.once('end', () => resolve(status));
      });
    // The bypassing connection idle first: scaled, its timer would be due before the other's.
    const bypass = await h2(proxy.ports.get('bypass')!);
    const edge = await h2(proxy.ports.get('idle')!);
    await pressure('1', 100);
    // Both timers were told of the change together; the one scaled has drained, the other would have with it (its GOAWAY read before the next answer).
    await withDeadline('the GOAWAY', edge.seen.ready);
    assert.equal(await get(bypass.client), 200);
    assert.equal(bypass.seen.goaway, false);
    assert.equal(await statValue(proxy, 'http.bypass.downstream_cx_idle_timeout'), 0);
    assert.equal(await statValue(proxy, 'http.idle.downstream_cx_idle_timeout'), 3);
    edge.client.destroy();
    bypass.client.destroy();
    await pressure('0', 0);
  });

  it('a silent stream, its timer running when the pressure rises, is answered 408', async () => {
    const s = connect(proxy.ports.get('idle')!, '127.0.0.1');
    s.on('error', () => undefined);
    let reply = '';
    // The answer may come before the admin shows the pressure: kept from the first byte.
    const answered = new Promise<void>((resolve) =>
      s.on('data', (d) => {
        reply += d;
        if (reply.includes('\r\n\r\n')) resolve();
      }),
    );
    s.write('GET /silent HTTP/1.1\r\nhost: x\r\n\r\n');
    await waitFor('the request upstream', () => (held.length > 0 ? true : undefined));
    await pressure('1', 100);
    await withDeadline('the 408', answered);
    assert.match(reply, /^HTTP\/1\.1 408/);
    assert.equal(await statValue(proxy, 'http.idle.downstream_rq_idle_timeout'), 1);
    s.destroy();
    await pressure('0', 0);
  });

  it('a connection reaches its max_connection_duration at the minimum', async () => {
    await pressure('1', 100);
    const { closed } = await idleHttp1(proxy.ports.get('max')!);
    await withDeadline('the connection closed', closed);
    assert.equal(await statValue(proxy, 'http.max.downstream_cx_max_duration_reached'), 1);
    await pressure('0', 0);
  });

  it('refuses the timers this proxy does not have, and a duplicate, by name', () => {
    const messages = loadErrors({
      overload_manager: overloadManager([
        { timer: 'TRANSPORT_SOCKET_CONNECT', min_timeout: '1s' },
        { timer: 'HTTP_DOWNSTREAM_STREAM_FLUSH', min_timeout: '1s' },
        { timer: 'HTTP_DOWNSTREAM_STREAM_IDLE', min_timeout: '1s' },
        { timer: 'HTTP_DOWNSTREAM_STREAM_IDLE', min_scale: { value: 10 } },
      ]),
    }).map(String).join('\n');
    assert.match(messages, /timer_scale_factors\[0\]\.timer: TRANSPORT_SOCKET_CONNECT: this proxy has no transport socket connect timeout/);
    assert.match(messages, /timer_scale_factors\[1\]\.timer: HTTP_DOWNSTREAM_STREAM_FLUSH: this proxy has no stream flush timeout/);
    assert.match(messages, /timer_scale_factors\[3\]\.timer: Found duplicate entry for timer type HTTP_DOWNSTREAM_STREAM_IDLE/);
  });
});
