import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { filterBootstrap, staticCluster } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Consistent hashing (RING_HASH, MAGLEV) with route hash_policy, as Envoy's: the same key reaches
 * the same host from every worker (two here, each request on a connection of its own).
 */

const tmp = tempDir();
const upstreams: Upstream[] = [];
let proxy: RunningProxy;

before(async () => {
  for (const name of ['A', 'B', 'C']) upstreams.push(await startUpstream(name));
  const ports = upstreams.map((u) => u.port);
  const routes = [
    { match: { prefix: '/ring' }, route: { cluster: 'ring', hash_policy: [{ header: { header_name: 'x-user' } }] } },
    { match: { prefix: '/maglev' }, route: { cluster: 'maglev', hash_policy: [{ query_parameter: { name: 'user' } }] } },
    { match: { prefix: '/cookie' }, route: { cluster: 'ring', hash_policy: [{ cookie: { name: 'sticky', ttl: '60s', path: '/' } }] } },
    { match: { prefix: '/ip' }, route: { cluster: 'maglev', hash_policy: [{ connection_properties: { source_ip: true } }] } },
    { match: { prefix: '/typed-ring' }, route: { cluster: 'typed-ring', hash_policy: [{ header: { header_name: 'x-user' } }] } },
    { match: { prefix: '/typed-maglev' }, route: { cluster: 'typed-maglev', hash_policy: [{ query_parameter: { name: 'user' } }] } },
    { match: { prefix: '/typed-rr' }, route: { cluster: 'typed-rr', hash_policy: [{ header: { header_name: 'x-user' } }] } },
  ];
  const typed = (name: string, type: string, config: object = {}) => ({ policies: [{ typed_extension_config: { name, typed_config: { '@type': `type.googleapis.com/envoy.extensions.load_balancing_policies.${type}`, ...config } } }] });
  const bootstrap = filterBootstrap('hashed', [], routes, ports[0]!);
  (bootstrap.static_resources as { clusters: object[] }).clusters.push(
    { ...staticCluster('ring', ports), lb_policy: 'RING_HASH', ring_hash_lb_config: { minimum_ring_size: 512 } },
    { ...staticCluster('maglev', ports), lb_policy: 'MAGLEV' },
    // The same policies as a gateway control plane gives them: typed, lb_policy set aside.
    { ...staticCluster('typed-ring', ports), load_balancing_policy: typed('envoy.load_balancing_policies.ring_hash', 'ring_hash.v3.RingHash', { minimum_ring_size: '512' }) },
    { ...staticCluster('typed-maglev', ports), load_balancing_policy: typed('envoy.load_balancing_policies.maglev', 'maglev.v3.Maglev') },
    { ...staticCluster('typed-rr', ports), lb_policy: 'RING_HASH', load_balancing_policy: typed('envoy.load_balancing_policies.round_robin', 'round_robin.v3.RoundRobin') },
  );
  proxy = await startProxy(bootstrap, ['--concurrency', '2']);
});

after(async () => {
  await stopAllProxies();
  for (const u of upstreams) await u.close();
  tmp.cleanup();
});

const get = (path: string, headers: Record<string, string> = {}) => httpRequest(`http://127.0.0.1:${proxy.ports.get('hashed')}${path}`, { headers });

/** For each key, the set of hosts its requests reached. */
async function hostsByKey(keys: string[], repeats: number, send: (key: string) => Promise<{ body: string }>): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  await Promise.all(
    keys.flatMap((key) =>
      Array.from({ length: repeats }, async () => {
        const { body } = await send(key);
        if (!out.has(key)) out.set(key, new Set());
        out.get(key)!.add(body);
      }),
    ),
  );
  return out;
}

describe('consistent hashing', () => {
  const keys = Array.from({ length: 24 }, (_, i) => `user-${i}`);

  for (const [policy, send] of [
    ['RING_HASH by header', (key: string) => get('/ring', { 'x-user': key })],
    ['MAGLEV by query parameter', (key: string) => get(`/maglev?user=${key}`)],
  ] as const) {
    it(`${policy}: every request of a key reaches one host, whichever worker takes it; the keys spread over the hosts`, async () => {
      const byKey = await hostsByKey(keys, 6, send);
      for (const [key, hosts] of byKey) assert.equal(hosts.size, 1, `${key} reached ${[...hosts].join(', ')}`);
      const used = new Set([...byKey.values()].map((h) => [...h][0]));
      assert.ok(used.size >= 2, `24 keys all went to ${[...used].join(', ')}`);
    });
  }

  it('a typed load_balancing_policy hashes as its lb_policy twin does: each key reaches the same host', async () => {
    for (const [legacy, typed] of [
      [(key: string) => get('/ring', { 'x-user': key }), (key: string) => get('/typed-ring', { 'x-user': key })],
      [(key: string) => get(`/maglev?user=${key}`), (key: string) => get(`/typed-maglev?user=${key}`)],
    ] as const) {
      const before = await hostsByKey(keys, 1, legacy);
      const after = await hostsByKey(keys, 3, typed);
      for (const key of keys) assert.deepEqual([...after.get(key)!], [...before.get(key)!], key);
    }
  });

  it('a typed round_robin sets lb_policy RING_HASH aside: one key is spread over every host', async () => {
    const byKey = await hostsByKey(['same'], 12, () => get('/typed-rr', { 'x-user': 'same' }));
    assert.equal(byKey.get('same')!.size, 3);
  });

  it('generates the hash cookie when the client has none (Set-Cookie with its ttl and path), and follows it after', async () => {
    const first = await get('/cookie');
    const setCookie = String(first.headers['set-cookie']);
    const m = /^sticky="([0-9a-f]{16})"; Max-Age=60; Path=\/; HttpOnly$/.exec(setCookie);
    assert.ok(m, setCookie);
    const byKey = await hostsByKey(['again'], 8, () => get('/cookie', { cookie: `sticky="${m[1]}"` }));
    assert.equal(byKey.get('again')!.size, 1);
  });

  it("hashes by the client's address: one client, one host", async () => {
    const byKey = await hostsByKey(['me'], 8, () => get('/ip'));
    assert.equal(byKey.get('me')!.size, 1);
  });
});

describe('consistent hashing configuration', () => {
  it('refuses what is not done, by name: MURMUR_HASH_2, a table size that is not prime, filter_state hashing', async () => {
    const routes = [{ match: { prefix: '/' }, route: { cluster: 'ring', hash_policy: [{ filter_state: { key: 'k' } }] } }];
    const bootstrap = filterBootstrap('bad', [], routes, 1);
    (bootstrap.static_resources as { clusters: object[] }).clusters.push(
      { ...staticCluster('ring', 1), lb_policy: 'RING_HASH', ring_hash_lb_config: { hash_function: 'MURMUR_HASH_2' } },
      { ...staticCluster('maglev', 1), lb_policy: 'MAGLEV', maglev_lb_config: { table_size: 65536 } },
    );
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad-hash.json', JSON.stringify(bootstrap))]);
    assert.equal(out.code, 1);
    const text = out.stderr + out.stdout;
    assert.match(text, /ring_hash_lb_config\.hash_function: MURMUR_HASH_2 is not supported/);
    assert.match(text, /maglev_lb_config\.table_size: 65536 is not a prime number/);
    assert.match(text, /field 'filter_state' of envoy\.config\.route\.v3\.RouteAction\.HashPolicy is not supported/);
  });
});
