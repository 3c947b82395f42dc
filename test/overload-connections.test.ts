import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { routesListener } from './helpers/bootstraps.js';
import { startProxy, statValue, stopAllProxies, waitFor, withDeadline, type RunningProxy } from './helpers/proxy.js';
import { tempDir } from './helpers/cli.js';

/**
 * The overload manager's connection actions, driven as Envoy's overload_integration_test drives
 * them, by an injected resource monitor (the pressure is the number in a file):
 * stop_accepting_connections leaves new connections in the backlog until it is no longer
 * saturated; reject_incoming_connections closes them as they are accepted
 * (`downstream_cx_overload_reject`); a listener with bypass_overload_manager is untouched, its
 * requests too (Envoy gives its connection managers the null overload manager). The
 * global_downstream_max_connections monitor closes one past its maximum
 * (`downstream_global_cx_overflow`), but not on a listener with ignore_global_conn_limit.
 */

const INJECTED = 'type.googleapis.com/envoy.extensions.resource_monitors.injected_resource.v3.InjectedResourceConfig';
const DOWNSTREAM_CONNECTIONS = 'type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig';
const answer = [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }];

after(() => stopAllProxies());

/** A request on a connection of its own; resolves with the status, or 'closed' if the proxy closed it unanswered. */
function ask(port: number): Promise<number | 'closed'> {
  return new Promise((resolve) => {
    const s: Socket = connect(port, '127.0.0.1');
    let reply = '';
    s.on('data', (d) => (reply += d));
    s.on('error', () => undefined);
    s.on('close', () => resolve(reply ? Number(reply.split(' ')[1]) : 'closed'));
    s.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
  });
}

describe('overload actions on connections, by an injected pressure', () => {
  const tmp = tempDir('overload-connections-');
  after(() => tmp.cleanup());
  const pressureFile = `${tmp.dir}/pressure`;
  let proxy: RunningProxy;

  before(async () => {
    writeFileSync(pressureFile, '0');
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      overload_manager: {
        refresh_interval: '0.05s',
        resource_monitors: [{ name: 'envoy.resource_monitors.injected_resource', typed_config: { '@type': INJECTED, filename: pressureFile } }],
        actions: [
          { name: 'envoy.overload_actions.stop_accepting_connections', triggers: [{ name: 'envoy.resource_monitors.injected_resource', threshold: { value: 0.9 } }] },
          // Saturated with it: a listener bypassing the overload manager answers its requests all the same.
          { name: 'envoy.overload_actions.stop_accepting_requests', triggers: [{ name: 'envoy.resource_monitors.injected_resource', threshold: { value: 0.9 } }] },
          { name: 'envoy.overload_actions.reject_incoming_connections', triggers: [{ name: 'envoy.resource_monitors.injected_resource', scaled: { scaling_threshold: 0.5, saturation_threshold: 0.8 } }] },
        ],
      },
      static_resources: {
        listeners: [
          routesListener('edge', answer),
          { ...routesListener('bypass', answer), bypass_overload_manager: true },
        ],
      },
    }, ['--concurrency', '1']);
  });

  const pressure = async (value: string, percent: number) => {
    writeFileSync(pressureFile, value);
    await waitFor(`pressure ${percent}`, async () => ((await statValue(proxy, 'overload.envoy.resource_monitors.injected_resource.pressure')) === percent ? true : undefined));
  };

  it('no pressure: connections are served', async () => {
    assert.equal(await ask(proxy.ports.get('edge')!), 200);
    assert.equal(await statValue(proxy, 'overload.envoy.overload_actions.reject_incoming_connections.active'), 0);
  });

  it('reject_incoming_connections saturated: each new connection closed as accepted, counted; bypass_overload_manager still served', async () => {
    await pressure('0.85', 85);
    assert.equal(await statValue(proxy, 'overload.envoy.overload_actions.reject_incoming_connections.active'), 1);
    const edge = proxy.ports.get('edge')!;
    assert.deepEqual(await Promise.all([ask(edge), ask(edge), ask(edge)]), ['closed', 'closed', 'closed']);
    assert.equal(await statValue(proxy, `listener.127.0.0.1_${edge}.downstream_cx_overload_reject`), 3);
    assert.equal(await ask(proxy.ports.get('bypass')!), 200);
  });

  it('scaled between its thresholds: that share of connections is rejected', async () => {
    await pressure('0.65', 65);
    assert.equal(await statValue(proxy, 'overload.envoy.overload_actions.reject_incoming_connections.scale_percent'), 50);
    const edge = proxy.ports.get('edge')!;
    const got = await Promise.all(Array.from({ length: 40 }, () => ask(edge)));
    const rejected = got.filter((g) => g === 'closed').length;
    // Half, drawn at random for each: not none, not all.
    assert.ok(rejected > 0 && rejected < 40, `${rejected} of 40 rejected`);
    assert.ok(got.every((g) => g === 'closed' || g === 200));
  });

  it('stop_accepting_connections saturated: new connections wait in the backlog, served once it is not; bypass_overload_manager still served, its requests too', async () => {
    await pressure('1', 100);
    assert.equal(await statValue(proxy, 'overload.envoy.overload_actions.stop_accepting_connections.active'), 1);
    const edge = proxy.ports.get('edge')!;
    const total = `listener.127.0.0.1_${edge}.downstream_cx_total`;
    const accepted = await statValue(proxy, total);
    let settled = false;
    const waiting = ask(edge).then((r) => {
      settled = true;
      return r;
    });
    // The bypassing listener answers meanwhile (though stop_accepting_requests is saturated), and the waiting connection was not accepted.
    assert.equal(await ask(proxy.ports.get('bypass')!), 200);
    assert.equal(settled, false);
    assert.equal(await statValue(proxy, total), accepted);
    await pressure('0', 0);
    assert.equal(await withDeadline('the waiting connection', waiting), 200);
    assert.equal(await statValue(proxy, total), accepted + 1);
  });

  it('an injected pressure that cannot be read counts a failed update', async () => {
    writeFileSync(pressureFile, 'not a number');
    await waitFor('a failed update', async () => ((await statValue(proxy, 'overload.envoy.resource_monitors.injected_resource.failed_updates')) > 0 ? true : undefined));
    assert.equal(await ask(proxy.ports.get('edge')!), 200);
  });
});

describe('the global_downstream_max_connections monitor', () => {
  it('closes a connection past its maximum, across listeners; ignore_global_conn_limit listeners are neither limited nor counted', async () => {
    const proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      overload_manager: {
        resource_monitors: [{ name: 'envoy.resource_monitors.global_downstream_max_connections', typed_config: { '@type': DOWNSTREAM_CONNECTIONS, max_active_downstream_connections: 2 } }],
      },
      static_resources: {
        listeners: [routesListener('a', answer), routesListener('b', answer), { ...routesListener('free', answer), ignore_global_conn_limit: true }],
      },
    }, ['--concurrency', '2']);
    const open = (port: number) => new Promise<Socket>((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
      s.on('error', () => undefined);
    });
    const held = [await open(proxy.ports.get('a')!), await open(proxy.ports.get('b')!), await open(proxy.ports.get('free')!)];
    await waitFor('three open connections', async () => ((await statValue(proxy, `listener.127.0.0.1_${proxy.ports.get('a')}.downstream_cx_active`)) + (await statValue(proxy, `listener.127.0.0.1_${proxy.ports.get('b')}.downstream_cx_active`)) === 2 ? true : undefined));
    assert.equal(await ask(proxy.ports.get('a')!), 'closed');
    assert.equal(await statValue(proxy, `listener.127.0.0.1_${proxy.ports.get('a')}.downstream_global_cx_overflow`), 1);
    assert.equal(await ask(proxy.ports.get('free')!), 200);
    held[0]!.destroy();
    await waitFor('room again', async () => ((await ask(proxy.ports.get('b')!)) === 200 ? true : undefined));
    for (const s of held) s.destroy();
  });

  it('is refused under another name, and as a trigger', async () => {
    const { loadErrors } = await import('./helpers/bootstraps.js');
    const errors = loadErrors({
      overload_manager: {
        resource_monitors: [
          { name: 'connections', typed_config: { '@type': DOWNSTREAM_CONNECTIONS, max_active_downstream_connections: 2 } },
          { name: 'envoy.resource_monitors.global_downstream_max_connections', typed_config: { '@type': DOWNSTREAM_CONNECTIONS, max_active_downstream_connections: 2 } },
        ],
        actions: [{ name: 'envoy.overload_actions.stop_accepting_requests', triggers: [{ name: 'envoy.resource_monitors.global_downstream_max_connections', threshold: { value: 0.9 } }] }],
      },
    }).map(String).join('\n');
    assert.match(errors, /resource_monitors\[0\]\.name: the envoy\.extensions\.resource_monitors\.downstream_connections\.v3\.DownstreamConnectionsConfig monitor is named envoy\.resource_monitors\.global_downstream_max_connections/);
    assert.match(errors, /triggers\[0\]\.name: envoy\.resource_monitors\.global_downstream_max_connections is measured on each accept/);
  });
});
