import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { connect as h2connect } from 'node:http2';
import { connect as tcpConnect } from 'node:net';
import { after, describe, it } from 'node:test';
import { HCM_TYPE, ROUTER_TYPE } from './helpers/bootstraps.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, withDeadline, type RunningProxy } from './helpers/proxy.js';

after(stopAllProxies);

function listener(name: string, direction: string): object {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    traffic_direction: direction,
    filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: name,
      route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: name } } }] }] },
      http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } }],
    } }] }],
  };
}

const bootstrap = {
  admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
  static_resources: { listeners: [listener('in', 'INBOUND'), listener('out', 'OUTBOUND')] },
};

/** A keep-alive GET; resolves with the status, body and Connection header. */
function keepAliveGet(port: number, agent: Agent): Promise<{ status: number; body: string; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, connection: res.headers.connection }));
    }).on('error', reject).end();
  });
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect(port, '127.0.0.1');
    s.on('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

const post = (p: RunningProxy, path: string) => httpRequest(`http://${p.admin}${path}`, { method: 'POST' });

describe('/drain_listeners', () => {
  it('refuses GET and skip_exit without graceful', async () => {
    const proxy = await startProxy(bootstrap, ['--concurrency', '1']);
    assert.equal((await httpRequest(`http://${proxy.admin}/drain_listeners`)).status, 400);
    assert.deepEqual([(await post(proxy, '/drain_listeners?skip_exit')).status, (await post(proxy, '/drain_listeners?skip_exit')).body], [400, 'skip_exit requires graceful\n']);
    assert.equal((await httpRequest(`http://${proxy.admin}/ready`)).status, 200); // nothing happened
    await proxy.stop();
  });

  it('stops the inbound listeners with inboundonly: new connections refused, open ones served, outbound untouched', async () => {
    const proxy = await startProxy(bootstrap, ['--concurrency', '2']);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const inPort = proxy.ports.get('in')!;
    assert.equal((await keepAliveGet(inPort, agent)).body, 'in');
    assert.equal((await post(proxy, '/drain_listeners?inboundonly')).body, 'OK\n');
    await waitFor('the inbound listener to refuse connections', async () => (await refuses(inPort)) || undefined);
    assert.equal((await keepAliveGet(inPort, agent)).body, 'in', 'an open keep-alive connection is still served');
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('out')}/`)).body, 'out');
    const ready = await httpRequest(`http://${proxy.admin}/ready`);
    assert.deepEqual([ready.status, ready.body], [503, 'DRAINING\n']);
    assert.match((await httpRequest(`http://${proxy.admin}/stats?filter=listener_stopped`)).body, /^listener_manager\.listener_stopped: 1$/m);
    agent.destroy();
    await proxy.stop();
  });

  it('drains gracefully: Connection: close and GOAWAY, then stops the listeners after --drain-time-s', async () => {
    const proxy = await startProxy(bootstrap, ['--concurrency', '1', '--drain-time-s', '1', '--drain-strategy', 'immediate']);
    const port = proxy.ports.get('out')!;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    assert.equal((await keepAliveGet(port, agent)).connection, 'keep-alive');
    const session = h2connect(`http://127.0.0.1:${port}`);
    const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
    await post(proxy, '/drain_listeners?graceful');
    const draining = await keepAliveGet(port, agent);
    assert.deepEqual([draining.status, draining.connection], [200, 'close']);
    await new Promise<void>((resolve, reject) => {
      const s = session.request({ ':path': '/' });
      s.on('response', () => resolve());
      s.on('error', reject);
      s.resume();
    });
    await goaway;
    session.close();
    await waitFor('the listeners to stop at the end of the drain', async () => (await refuses(port)) || undefined);
    assert.match((await httpRequest(`http://${proxy.admin}/stats?filter=downstream_cx_drain_close`)).body, /^http\.out\.downstream_cx_drain_close: [1-9]/m);
    agent.destroy();
    await proxy.stop();
  });

  it('keeps the listeners open after the drain with skip_exit', async () => {
    const proxy = await startProxy(bootstrap, ['--concurrency', '1', '--drain-time-s', '1']);
    const posted = Date.now();
    await post(proxy, '/drain_listeners?graceful&skip_exit');
    // A pause that proves an absence: past the 1 s drain (measured from before it began), the
    // listener has not stopped.
    await new Promise((r) => setTimeout(r, posted + 1500 - Date.now()));
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('in')}/`);
    assert.deepEqual([r.status, r.headers.connection], [200, 'close']); // past the deadline, gradual always closes
    await proxy.stop();
  });
});

describe('draining through the health check', () => {
  it('closes every keep-alive connection after its response while health checks are failed', async () => {
    const proxy = await startProxy(bootstrap, ['--concurrency', '1']);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const port = proxy.ports.get('in')!;
    await post(proxy, '/healthcheck/fail');
    await waitFor('workers to know', async () => ((await keepAliveGet(port, agent)).connection === 'close' ? true : undefined));
    await post(proxy, '/healthcheck/ok');
    await waitFor('keep-alive again', async () => ((await keepAliveGet(port, agent)).connection === 'keep-alive' ? true : undefined));
    agent.destroy();
    await proxy.stop();
  });
});

describe('idle keep-alive connections while draining', () => {
  /**
   * One request on its own keep-alive connection; the Keep-Alive hint, and how long after the
   * request was sent the server closed the idle connection (from before the server could have
   * started its clock, so a slow machine only makes it longer).
   */
  function hinted(port: number): Promise<{ connection: string | undefined; timeout: number | undefined; closedAfterMs: Promise<number> }> {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    return new Promise((resolve, reject) => {
      const sent = Date.now();
      const req = request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
        const socket = res.socket;
        res.resume();
        res.on('end', () => {
          const closedAfterMs = new Promise<number>((r) => socket.once('close', () => r(Date.now() - sent)));
          const m = /timeout=(\d+)/.exec(String(res.headers['keep-alive'] ?? ''));
          resolve({ connection: res.headers.connection, timeout: m ? Number(m[1]) : undefined, closedAfterMs });
        });
      });
      req.on('error', reject).end();
    });
  }

  it('are told the drain deadline (a shrinking Keep-Alive timeout) and closed once idle past it', async () => {
    const proxy = await startProxy(bootstrap, ['--concurrency', '1', '--drain-time-s', '4', '--drain-strategy', 'gradual']);
    const port = proxy.ports.get('in')!;
    const before = await hinted(port);
    assert.equal(before.timeout, 3600, 'the idle timeout (1 h by default) before any drain');
    await post(proxy, '/drain_listeners?graceful&skip_exit');
    // Early in a gradual drain most responses keep their connection; take the first that does.
    const early = await waitFor('a kept connection', async () => {
      const r = await hinted(port);
      return r.connection === 'close' ? undefined : r;
    });
    assert.ok(early.timeout !== undefined && early.timeout <= 4, `told ${early.timeout} s`);
    // Closed at all (skip_exit: nothing else would ever close it), and not before the hint ran out.
    const closedAfter = await withDeadline('the idle connection to be closed', early.closedAfterMs, 30_000);
    assert.ok(closedAfter >= early.timeout * 1000 - 10, `closed after ${closedAfter} ms, having been told ${early.timeout} s`);
    await proxy.stop();
  });
});
