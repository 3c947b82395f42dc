import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { hcmFilter, loadErrors, staticCluster } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { LISTENER_URL, TestControlPlane } from './helpers/control-plane.js';

/**
 * Listener.additional_addresses (Envoy's hotrestart_test.sh configures them): a bootstrap
 * listener accepts on each, with the same filter chains; /listeners?format=json shows them as
 * additional_local_addresses; a hot restart hands each socket over, port and all. A listener from
 * LDS too (Envoy Gateway and Istio put a dual-stack listener's second family there): an update
 * keeps the sockets of the addresses that stay, opens the new, closes those that went, and an
 * address another listener has refuses the update.
 */

const answer = { match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'served' } } };
const listener = {
  name: 'multi',
  address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
  additional_addresses: [{ address: { socket_address: { address: '127.0.0.2', port_value: 0 } } }, { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }],
  filter_chains: [{ filters: [hcmFilter('multi', [answer])] }],
};
const config = { admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }, static_resources: { listeners: [listener] } };

after(() => stopAllProxies());

async function addresses(proxy: RunningProxy): Promise<string[]> {
  const json = JSON.parse((await httpRequest(`http://${proxy.admin}/listeners?format=json`)).body) as { listener_statuses: { local_address: { socket_address: { address: string; port_value: number } }; additional_local_addresses?: { socket_address: { address: string; port_value: number } }[] }[] };
  const l = json.listener_statuses[0]!;
  return [l.local_address, ...(l.additional_local_addresses ?? [])].map((a) => `${a.socket_address.address}:${a.socket_address.port_value}`);
}

describe('additional_addresses', () => {
  it('serves on each address, and keeps each port across a hot restart', async () => {
    const e0 = await startProxy(config, ['--concurrency', '2', '--parent-shutdown-time-s', '2']);
    const before = await addresses(e0);
    assert.equal(before.length, 3);
    assert.match(before[1]!, /^127\.0\.0\.2:\d+$/);
    for (const a of before) assert.equal((await httpRequest(`http://${a}/`)).body, 'served', a);
    const e1 = await startProxy(config, ['--base-id', String(e0.baseId), '--restart-epoch', '1', '--concurrency', '1', '--parent-shutdown-time-s', '2']);
    assert.deepEqual(await addresses(e1), before);
    for (const a of before) assert.equal((await httpRequest(`http://${a}/`)).body, 'served', a);
  });

  it('are refused on UDP, by name', () => {
    const udp = { ...listener, address: { socket_address: { protocol: 'UDP', address: '127.0.0.1', port_value: 0 } } };
    assert.deepEqual(loadErrors({ static_resources: { listeners: [udp] } }).filter((e) => e.path.includes('additional_addresses')).map((e) => e.code), ['unsupported', 'unsupported']);
  });
});

describe('additional_addresses on a listener from LDS', () => {
  const at = (address: string, port = 0) => ({ address: { socket_address: { address, port_value: port } } });
  const dynamic = (body: string, extra: string[], name = 'dyn', main = at('127.0.0.1')) => ({
    '@type': LISTENER_URL,
    name,
    ...main,
    additional_addresses: extra.map((a) => at(a)),
    filter_chains: [{ filters: [hcmFilter(name, [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: body } } }])] }],
  });
  const refused = async (address: string) => {
    try {
      await httpRequest(`http://${address}/`);
      return false;
    } catch {
      return true;
    }
  };

  it('serve, keep their sockets across updates, open and close with them', async () => {
    const cp = await TestControlPlane.start();
    try {
      cp.set(LISTENER_URL, '1', [dynamic('one', ['127.0.0.2'])]);
      const proxy = await startProxy({
        node: { id: 'additional', cluster: 'tests' },
        admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        static_resources: { clusters: [staticCluster('xds', cp.port)] },
        dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, lds_config: { ads: {}, resource_api_version: 'V3' } },
      }, ['--concurrency', '2']);
      const first = await waitFor('the LDS listener', async () => {
        const a = (await addresses(proxy).catch(() => [])) as string[];
        return a.length === 2 ? a : undefined;
      });
      assert.match(first[1]!, /^127\.0\.0\.2:\d+$/);
      for (const a of first) assert.equal((await httpRequest(`http://${a}/`)).body, 'one', a);

      // Its filter chain changes: updated in place, on the same sockets.
      cp.set(LISTENER_URL, '2', [dynamic('two', ['127.0.0.2'])]);
      await waitFor('the in-place update', async () => ((await statValue(proxy, 'listener_manager.listener_in_place_updated')) === 1 ? true : undefined));
      assert.deepEqual(await addresses(proxy), first);
      for (const a of first) assert.equal((await httpRequest(`http://${a}/`)).body, 'two', a);

      // One more address: the others keep their ports.
      cp.set(LISTENER_URL, '3', [dynamic('three', ['127.0.0.2', '127.0.0.3'])]);
      const third = await waitFor('three addresses', async () => {
        const a = await addresses(proxy);
        return a.length === 3 ? a : undefined;
      });
      assert.deepEqual(third.slice(0, 2), first);
      for (const a of third) await waitFor(`'three' on ${a}`, async () => ((await httpRequest(`http://${a}/`)).body === 'three' ? true : undefined));

      // Another listener may not take an address this one has.
      const before = await statValue(proxy, 'listener_manager.lds.update_rejected');
      cp.set(LISTENER_URL, '4', [dynamic('three', ['127.0.0.2', '127.0.0.3']), dynamic('thief', [], 'thief', { address: { socket_address: { address: '127.0.0.3', port_value: Number(third[2]!.split(':')[1]) } } })]);
      await waitFor('the refusal', async () => ((await statValue(proxy, 'listener_manager.lds.update_rejected')) > before ? true : undefined));
      assert.equal((await httpRequest(`http://${third[2]}/`)).body, 'three');

      // The address goes: its socket closes.
      cp.set(LISTENER_URL, '5', [dynamic('five', ['127.0.0.2'])]);
      await waitFor('the third address closed', async () => ((await refused(third[2]!)) ? true : undefined));
      assert.deepEqual(await addresses(proxy), first);
      for (const a of first) await waitFor(`'five' on ${a}`, async () => ((await httpRequest(`http://${a}/`)).body === 'five' ? true : undefined));
    } finally {
      await stopAllProxies();
      cp.stop();
    }
  });
});
