import assert from 'node:assert/strict';
import { Agent, get } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { routesListener } from './helpers/bootstraps.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * Listener.max_connections_to_accept_per_socket_event, as Envoy's overload_integration_test
 * (ListenerMaxConnectionPerSocketEventTest: 2, ten clients) has it: every connection is served,
 * at most that many accepted per readiness event, each event's count in the listener's
 * connections_accepted_per_socket_event histogram.
 */

let proxy: RunningProxy;

before(async () => {
  const listener = { ...routesListener('bounded', [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }]), max_connections_to_accept_per_socket_event: 2 };
  proxy = await startProxy({ admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }, static_resources: { listeners: [listener] } }, ['--concurrency', '1']);
});

after(() => stopAllProxies());

describe('max_connections_to_accept_per_socket_event', () => {
  it('serves every connection of a burst, at most two accepted per event', async () => {
    const port = proxy.ports.get('bounded')!;
    const results = await Promise.all(Array.from({ length: 10 }, () => httpRequest(`http://127.0.0.1:${port}/`, { agent: false })));
    assert.deepEqual(results.map((r) => [r.status, r.body]), Array.from({ length: 10 }, () => [200, 'ok']));
    const text = (await httpRequest(`http://${proxy.admin}/stats/prometheus?filter=connections_accepted_per_socket_event`)).body;
    const value = (suffix: string) => Number(new RegExp(`^envoy_listener_connections_accepted_per_socket_event_${suffix}\\{[^}]*\\} (\\d+)`, 'm').exec(text)?.[1]);
    assert.equal(value('sum'), 10, text);
    assert.ok(value('count') >= 5, `10 connections in ${value('count')} events: more than 2 in one (${text})`);
    // Keep-alive connections serve request after request (each is accepted once).
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    try {
      const statuses = await Promise.all(Array.from({ length: 6 }, () => new Promise<number>((resolve, reject) => {
        get(`http://127.0.0.1:${port}/`, { agent }, (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0))).on('error', reject);
      })));
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200]);
    } finally {
      agent.destroy();
    }
  });

  it('is refused at 0, as its proto says (gt 0)', async () => {
    const { loadErrors } = await import('./helpers/bootstraps.js');
    const listener = { ...routesListener('zero', [{ match: { prefix: '/' }, direct_response: { status: 200 } }]), max_connections_to_accept_per_socket_event: 0 };
    assert.deepEqual(loadErrors({ static_resources: { listeners: [listener] } }).map((e) => [e.code, e.path]), [['constraint', 'static_resources.listeners[0].max_connections_to_accept_per_socket_event']]);
  });
});
