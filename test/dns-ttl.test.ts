import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { loadErrors, minimalBootstrap, routesListener } from './helpers/bootstraps.js';
import { startDns, type TestDns } from './helpers/dns-server.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';

/**
 * A STRICT_DNS cluster asking the name servers of its typed_dns_resolver_config (c-ares), and
 * respect_dns_ttl, as Envoy's strict_dns_cluster_test has them: a name re-resolved after its
 * record's TTL, not after dns_refresh_rate. The names are served by a DNS server of the test's own;
 * the upstreams listen on 127.0.0.1 and 127.0.0.2, on one port.
 */

let dns: TestDns;
const servers: Server[] = [];
let port = 0;
let proxy: RunningProxy;

async function serve(address: string, name: string, at: number): Promise<number> {
  const server = createServer((_req, res) => res.end(name));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(at, address, resolve));
  return (server.address() as { port: number }).port;
}

const cares = (dnsPort: number) => ({
  name: 'envoy.network.dns_resolver.cares',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.network.dns_resolver.cares.v3.CaresDnsResolverConfig', resolvers: [{ socket_address: { address: '127.0.0.1', port_value: dnsPort } }], query_timeout_seconds: '1', query_tries: 2 },
});

const dnsCluster = (name: string, host: string, extra: object) => ({
  name,
  type: 'STRICT_DNS',
  connect_timeout: '1s',
  dns_lookup_family: 'V4_ONLY',
  dns_refresh_rate: '60s',
  load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: port } } } }] }] },
  ...extra,
});

before(async () => {
  dns = await startDns();
  port = await serve('127.0.0.1', 'A', 0);
  await serve('127.0.0.2', 'B', port);
  dns.set('ttl.test', '127.0.0.1', 1);
  dns.set('rate.test', '127.0.0.1', 1);
  proxy = await startProxy({
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [routesListener('ingress', [
        { match: { prefix: '/ttl' }, route: { cluster: 'ttl' } },
        { match: { prefix: '/rate' }, route: { cluster: 'rate' } },
      ])],
      clusters: [
        dnsCluster('ttl', 'ttl.test', { respect_dns_ttl: true, typed_dns_resolver_config: cares(dns.port) }),
        dnsCluster('rate', 'rate.test', { typed_dns_resolver_config: cares(dns.port) }),
      ],
    },
  }, ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await dns.close();
  for (const s of servers) s.close();
});

const body = async (path: string) => (await httpRequest(`http://127.0.0.1:${proxy.ports.get('ingress')}${path}`)).body;

describe('typed_dns_resolver_config and respect_dns_ttl', () => {
  it("resolves through the cluster's own name servers", async () => {
    assert.equal(await body('/ttl'), 'A');
    assert.equal(await body('/rate'), 'A');
    assert.ok(dns.queries('ttl.test') >= 1 && dns.queries('rate.test') >= 1);
  });

  it('respect_dns_ttl: a name is asked again after its TTL and its new address serves; without it, dns_refresh_rate holds', async () => {
    const rateQueries = dns.queries('rate.test');
    dns.set('ttl.test', '127.0.0.2', 1);
    dns.set('rate.test', '127.0.0.2', 1);
    await waitFor('the ttl cluster to follow its name', async () => ((await body('/ttl')) === 'B' ? true : undefined));
    assert.equal(await body('/rate'), 'A', 'dns_refresh_rate is 60 s');
    assert.equal(dns.queries('rate.test'), rateQueries);
  });
});

describe('the checks', () => {
  it('take the c-ares resolver, and refuse what Node\'s resolver cannot do, by name', () => {
    const doc = minimalBootstrap() as { static_resources: { clusters: object[] } };
    const typed = { ...cares(53).typed_config, rotate_nameservers: true };
    doc.static_resources.clusters.push(dnsCluster('d', 'example.com', { typed_dns_resolver_config: { name: 'cares', typed_config: typed } }));
    assert.deepEqual(loadErrors(doc).map((e) => [e.code, e.path]), [['unsupported_field', 'static_resources.clusters[1].typed_dns_resolver_config.typed_config.rotate_nameservers']]);
  });
});
