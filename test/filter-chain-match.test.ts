import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type Socket } from 'node:net';
import { chainMatchOf, selectChain, type ConnectionAddresses, type ConnectionFacts } from '../shared/chain-match.js';
import { hcmFilter, loadErrors } from './helpers/bootstraps.js';
import { startProxy, stopAllProxies, withDeadline, type RunningProxy } from './helpers/proxy.js';
import { proxyV1Header } from '../shared/network/proxy-protocol.js';

/**
 * Filter chains chosen by the connection's addresses (FilterChainMatch prefix_ranges,
 * direct_source_prefix_ranges, source_type, source_prefix_ranges, source_ports), in Envoy's order
 * and with its lookups (filter_chain_manager_impl.cc): the longest range holding the address wins,
 * chains without ranges are the catch-all, and a step never goes back to a chain an earlier step
 * dropped. Through the proxy, behind a PROXY header: the restored addresses choose, the direct
 * source is the peer.
 */

type Named = { name: string; match: ReturnType<typeof chainMatchOf> };
const chains = (...specs: [string, object][]): Named[] => specs.map(([name, m]) => ({ name, match: chainMatchOf({ filter_chain_match: m }) }));
const ep = (ip: string, port = 40000) => ({ ip, port });
function facts(addresses: Partial<ConnectionAddresses> & { remote: ConnectionAddresses['remote'] }, serverName?: string): ConnectionFacts {
  const local = addresses.local ?? ep('127.0.0.1', 443);
  return {
    destinationPort: local.port,
    serverName,
    transportProtocol: 'raw_buffer',
    applicationProtocols: [],
    addresses: { local, remote: addresses.remote, directRemote: addresses.directRemote ?? addresses.remote },
  };
}
const pick = (cs: Named[], f: ConnectionFacts) => selectChain(cs, f)?.name;
const range = (address_prefix: string, prefix_len?: number) => ({ address_prefix, ...(prefix_len === undefined ? {} : { prefix_len }) });

describe('choosing a filter chain by address', () => {
  it('destination IP: the longest range that holds it, else the chains without ranges', () => {
    const cs = chains(['wide', { prefix_ranges: [range('127.0.0.0', 8)] }], ['exact', { prefix_ranges: [range('127.0.0.1')] }], ['any', {}]);
    assert.equal(pick(cs, facts({ local: ep('127.0.0.1', 443), remote: ep('192.0.2.1') })), 'exact');
    assert.equal(pick(cs, facts({ local: ep('127.0.0.2', 443), remote: ep('192.0.2.1') })), 'wide');
    assert.equal(pick(cs, facts({ local: ep('10.0.0.1', 443), remote: ep('192.0.2.1') })), 'any');
    // An IPv6 address is held only by IPv6 ranges.
    assert.equal(pick(chains(['v6', { prefix_ranges: [range('2001:db8::', 32)] }], ['v4', { prefix_ranges: [range('0.0.0.0', 0)] }]), facts({ local: ep('2001:db8::5', 443), remote: ep('::1') })), 'v6');
  });

  it('source IP: no chain without ranges, no match (the default chain, if any, takes it)', () => {
    const cs = chains(['tens', { source_prefix_ranges: [range('10.0.0.0', 8)] }]);
    assert.equal(pick(cs, facts({ remote: ep('10.1.2.3') })), 'tens');
    assert.equal(pick(cs, facts({ remote: ep('192.0.2.1') })), undefined);
  });

  it('source type: SAME_IP_OR_LOOPBACK or EXTERNAL, else ANY', () => {
    const all = chains(['local', { source_type: 'SAME_IP_OR_LOOPBACK' }], ['external', { source_type: 'EXTERNAL' }], ['any', {}]);
    assert.equal(pick(all, facts({ remote: ep('127.0.0.1') })), 'local');
    assert.equal(pick(all, facts({ local: ep('10.0.0.1', 443), remote: ep('10.0.0.1') })), 'local');
    assert.equal(pick(all, facts({ remote: ep('192.0.2.1') })), 'external');
    assert.equal(pick(chains(['local', { source_type: 1 }], ['any', {}]), facts({ remote: ep('192.0.2.1') })), 'any');
  });

  it('source port after source IP; direct source before source type', () => {
    const ports = chains(['port', { source_ports: [1234] }], ['other', {}]);
    assert.equal(pick(ports, facts({ remote: ep('192.0.2.1', 1234) })), 'port');
    assert.equal(pick(ports, facts({ remote: ep('192.0.2.1', 4321) })), 'other');
    const direct = chains(['lb', { direct_source_prefix_ranges: [range('10.0.0.0', 8)], source_type: 'EXTERNAL' }], ['rest', { source_type: 'EXTERNAL' }]);
    assert.equal(pick(direct, facts({ remote: ep('192.0.2.1'), directRemote: ep('10.9.9.9') })), 'lb');
    assert.equal(pick(direct, facts({ remote: ep('192.0.2.1'), directRemote: ep('172.16.0.1') })), 'rest');
  });

  it('never goes back a step: the destination range chosen, its server names must fit', () => {
    const cs = chains(['exact', { prefix_ranges: [range('127.0.0.1')], server_names: ['a.example'] }], ['any', {}]);
    assert.equal(pick(cs, facts({ remote: ep('192.0.2.1') }, 'a.example')), 'exact');
    assert.equal(pick(cs, facts({ remote: ep('192.0.2.1') }, 'b.example')), undefined);
  });
});

describe('address matches in configuration', () => {
  const listener = (matches: object[]) => ({
    static_resources: {
      listeners: [{
        name: 'l',
        address: { socket_address: { address: '127.0.0.1', port_value: 1 } },
        filter_chains: matches.map((m) => ({ filter_chain_match: m, filters: [hcmFilter('l', [])] })),
      }],
    },
  });
  const messages = (matches: object[]) => loadErrors(listener(matches)).map(String).join('\n');

  it('chains that overlap in any combination are duplicates, ranges compared masked', () => {
    assert.equal(messages([{ source_prefix_ranges: [range('10.0.0.0', 8)] }, { source_prefix_ranges: [range('10.0.0.0', 16)] }, {}]), '');
    assert.match(messages([{ source_prefix_ranges: [range('10.0.0.0', 8)] }, { source_prefix_ranges: [range('10.1.2.3', 8)] }]), /filter_chains\[1\]: error adding listener 'l': multiple filter chains with the same matching rules are defined \(also filter_chains\[0\]\)/);
    assert.match(messages([{ server_names: ['a.example', 'b.example'] }, { server_names: ['b.example'] }]), /multiple filter chains with the same matching rules/);
    assert.match(messages([{ source_ports: [1, 2] }, { source_ports: [2, 3] }]), /multiple filter chains with the same matching rules/);
  });

  it('a malformed range names its field', () => {
    assert.match(messages([{ prefix_ranges: [range('10.0.0.300', 8)] }]), /filter_chain_match\.prefix_ranges\[0\]: malformed IP address: 10\.0\.0\.300/);
    assert.match(messages([{ source_prefix_ranges: [range('10.0.0.0', 33)] }]), /source_prefix_ranges\[0\]: prefix_len 33 is past an IPv4 address's 32 bits/);
    assert.match(messages([{ address_suffix: '1.2.3.4' }]), /address_suffix/);
  });
});

describe('filter chains by address, behind a PROXY header', () => {
  let proxy: RunningProxy;
  const direct = (body: string) => [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: body } } }];
  const chain = (m: object, body: string) => ({ filter_chain_match: m, filters: [hcmFilter(body, direct(body))] });

  before(async () => {
    proxy = await startProxy({
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [{
          name: 'pp',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          listener_filters: [{ name: 'envoy.filters.listener.proxy_protocol', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol' } }],
          filter_chains: [
            chain({ source_prefix_ranges: [range('198.51.100.0', 24)] }, 'partner'),
            chain({ source_prefix_ranges: [range('198.51.100.7')], source_ports: [7777] }, 'partner-port'),
            chain({ prefix_ranges: [range('192.0.2.10')] }, 'vip'),
            chain({ source_type: 'SAME_IP_OR_LOOPBACK' }, 'local'),
          ],
          default_filter_chain: { filters: [hcmFilter('default', direct('default'))] },
        }],
      },
    }, ['--concurrency', '1']);
  });

  after(() => stopAllProxies());

  function ask(source: string, sourcePort: number, destination = '203.0.113.1'): Promise<string> {
    return withDeadline('a reply', new Promise((resolve) => {
      const s: Socket = connect(proxy.ports.get('pp')!, '127.0.0.1');
      let reply = '';
      s.on('data', (d) => (reply += d));
      s.on('error', () => undefined);
      s.on('close', () => resolve(reply.split('\r\n\r\n')[1] ?? ''));
      s.write(Buffer.concat([proxyV1Header({ ip: source, port: sourcePort }, { ip: destination, port: 80 }), Buffer.from('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')]));
    }));
  }

  it('the restored addresses choose the chain', async () => {
    assert.equal(await ask('198.51.100.7', 7777), 'partner-port');
    // The longest source range chosen, its source ports must fit (Envoy does not go back to the /24): the default chain.
    assert.equal(await ask('198.51.100.7', 7778), 'default');
    assert.equal(await ask('198.51.100.9', 1), 'partner');
    // The destination comes before the source.
    assert.equal(await ask('198.51.100.9', 1, '192.0.2.10'), 'vip');
    assert.equal(await ask('192.0.2.99', 1), 'default');
    // The source type comes before the source ranges: a client on a loopback address (the header's, not the peer's).
    assert.equal(await ask('127.0.0.5', 1), 'local');
  });
});
