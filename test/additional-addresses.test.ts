import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { hcmFilter, loadErrors } from './helpers/bootstraps.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * Listener.additional_addresses (Envoy's hotrestart_test.sh configures them): a bootstrap
 * listener accepts on each, with the same filter chains; /listeners?format=json shows them as
 * additional_local_addresses; a hot restart hands each socket over, port and all.
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

  it('are refused on a listener from LDS and on UDP, by name', () => {
    const udp = { ...listener, address: { socket_address: { protocol: 'UDP', address: '127.0.0.1', port_value: 0 } } };
    assert.deepEqual(loadErrors({ static_resources: { listeners: [udp] } }).filter((e) => e.path.includes('additional_addresses')).map((e) => e.code), ['unsupported', 'unsupported']);
  });
});
