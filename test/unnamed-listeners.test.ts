import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { hcmFilter, ROUTER_TYPE } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { downstreamTls, makePki, type TestPki } from './helpers/certs.js';
import { httpRequest, startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * Issue 39: listeners without a `name`, as Envoy's listener manager names them (a random UUID,
 * listener_manager_impl.cc), minted once by the load so that every lookup by name agrees. Before,
 * the TLS contexts were stored under '' and looked up as `listener_<i>`, and an unnamed listener
 * served its TLS filter chains as cleartext. Each lookup keyed by a listener's name is tried with
 * unnamed listeners: TLS, filter-chain matching, the health-check filter, stats, /listeners,
 * /config_dump. A cluster, whose name is `min_len: 1`, is refused without one.
 */

const HEALTH_CHECK_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck';
const TLS_INSPECTOR = { name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let pki: TestPki;
let proxy: RunningProxy;
/** The unnamed listeners' ports, by the role the test gives them. */
const ports = new Map<'tls' | 'mixed' | 'health', number>();
/** Their names as /listeners shows them. */
const names = new Map<number, string>();

const answer = (text: string) => [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: text } } }];
const address = { socket_address: { address: '127.0.0.1', port_value: 0 } };

function httpsGet(port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path: '/', servername, ca: pki.ca, agent: false, headers: { host: servername } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends a cleartext request and reads until the proxy closes the connection. */
function cleartext(port: number): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const s = connect(port, '127.0.0.1', () => s.write('GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n'));
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    s.on('error', () => resolve(got));
    s.on('close', () => resolve(got));
  });
}

before(async () => {
  pki = makePki();
  const server = pki.leaf('server', { sans: ['DNS:example.com'], serial: 'E1' });
  const healthHcm = hcmFilter('health', answer('served past the health check'));
  (healthHcm.typed_config as { http_filters: object[] }).http_filters = [
    { name: 'envoy.filters.http.health_check', typed_config: { '@type': HEALTH_CHECK_TYPE, pass_through_mode: false, headers: [{ name: ':path', string_match: { exact: '/healthz' } }] } },
    { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } },
  ];
  proxy = await startProxy(
    {
      admin: { address },
      static_resources: {
        listeners: [
          // TLS only: a cleartext client must not be served.
          { address, filter_chains: [{ transport_socket: downstreamTls(server), filters: [hcmFilter('tls_only', answer('tls only'))] }] },
          // A TLS chain by SNI and a cleartext one, chosen by the TLS inspector.
          {
            address,
            listener_filters: [TLS_INSPECTOR],
            filter_chains: [
              { filter_chain_match: { server_names: ['example.com'] }, transport_socket: downstreamTls(server), filters: [hcmFilter('mixed_tls', answer('tls by sni'))] },
              { filter_chain_match: { transport_protocol: 'raw_buffer' }, filters: [hcmFilter('mixed_plain', answer('cleartext'))] },
            ],
          },
          { address, filter_chains: [{ filters: [healthHcm] }] },
          { name: 'named', address, filter_chains: [{ filters: [hcmFilter('named', answer('named'))] }] },
        ],
      },
    },
    ['--concurrency', '2'],
  );
  const listed = JSON.parse((await httpRequest(`http://${proxy.admin}/listeners?format=json`)).body) as { listener_statuses: { name: string; local_address: { socket_address: { port_value: number } } }[] };
  const unnamed = listed.listener_statuses.filter((l) => l.name !== 'named');
  for (const [i, role] of (['tls', 'mixed', 'health'] as const).entries()) {
    const port = unnamed[i]!.local_address.socket_address.port_value;
    ports.set(role, port);
    names.set(port, unnamed[i]!.name);
  }
});

after(async () => {
  await stopAllProxies();
  pki.remove();
});

describe('listeners without a name', () => {
  it('are named with distinct UUIDs, as Envoy names them, in /listeners', async () => {
    const all = [...names.values()];
    assert.equal(all.length, 3);
    for (const name of all) assert.match(name, UUID);
    assert.equal(new Set(all).size, 3);
    const text = (await httpRequest(`http://${proxy.admin}/listeners`)).body;
    for (const [port, name] of names) assert.ok(text.includes(`${name}::127.0.0.1:${port}\n`), text);
    assert.ok(text.includes('named::127.0.0.1:'), text);
  });

  it('serve their TLS filter chain over TLS, and never as cleartext', async () => {
    const port = ports.get('tls')!;
    assert.equal(await httpsGet(port, 'example.com'), 'tls only');
    const plain = await cleartext(port);
    assert.doesNotMatch(plain, /^HTTP\/1\.1 200/, `a cleartext request was served: ${JSON.stringify(plain.slice(0, 120))}`);
    assert.ok((await statValue(proxy, `listener.127.0.0.1_${port}.ssl.handshake`)) >= 1);
  });

  it('choose between a TLS chain and a cleartext one by what the TLS inspector finds', async () => {
    const port = ports.get('mixed')!;
    assert.equal(await httpsGet(port, 'example.com'), 'tls by sni');
    assert.match(await cleartext(port), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\ncleartext$/);
  });

  it('run their health-check filter, which follows /healthcheck/fail', async () => {
    const port = ports.get('health')!;
    assert.equal((await httpRequest(`http://127.0.0.1:${port}/healthz`)).status, 200);
    assert.equal((await httpRequest(`http://127.0.0.1:${port}/other`)).body, 'served past the health check');
    assert.equal((await httpRequest(`http://${proxy.admin}/healthcheck/fail`, { method: 'POST' })).status, 200);
    try {
      const failing = await httpRequest(`http://127.0.0.1:${port}/healthz`);
      assert.equal(failing.status, 503);
      assert.equal(failing.headers['x-envoy-immediate-health-check-fail'], undefined, 'a health check answer does not carry it (Envoy: only other responses do)');
      assert.equal((await httpRequest(`http://127.0.0.1:${port}/other`)).headers['x-envoy-immediate-health-check-fail'], 'true');
    } finally {
      await httpRequest(`http://${proxy.admin}/healthcheck/ok`, { method: 'POST' });
    }
  });

  it("count their connections under their address, as Envoy's listener stats are named", async () => {
    for (const port of ports.values()) assert.ok((await statValue(proxy, `listener.127.0.0.1_${port}.downstream_cx_total`)) >= 1, `listener.127.0.0.1_${port}`);
  });

  it('appear in /config_dump as configured, without the name they were given', async () => {
    const dump = JSON.parse((await httpRequest(`http://${proxy.admin}/config_dump?resource=static_listeners`)).body) as { configs: { listener: { name?: string; filter_chains: object[] } }[] };
    assert.equal(dump.configs.length, 4);
    assert.deepEqual(dump.configs.map((c) => c.listener.name), [undefined, undefined, undefined, 'named']);
  });
});

describe('an unnamed listener on port 0 across a hot restart', () => {
  it("keeps its port: the next epoch asks for the socket by the listener's place, its UUID being new", async () => {
    const config = { admin: { address }, static_resources: { listeners: [{ address, filter_chains: [{ filters: [hcmFilter('restarted', answer('served'))] }] }] } };
    const e0 = await startProxy(config, ['--concurrency', '1', '--parent-shutdown-time-s', '2']);
    const [name0, port0] = [...e0.ports][0]!;
    const e1 = await startProxy(config, ['--base-id', String(e0.baseId), '--restart-epoch', '1', '--concurrency', '1', '--parent-shutdown-time-s', '2']);
    const [name1, port1] = [...e1.ports][0]!;
    assert.equal(port1, port0, 'the same port');
    assert.notEqual(name1, name0);
    assert.match(name1, UUID);
    assert.equal((await httpRequest(`http://127.0.0.1:${port1}/`)).body, 'served');
  });
});

describe('a cluster without a name', () => {
  it('is refused, naming the field (Cluster.name is min_len: 1)', async () => {
    const tmp = tempDir();
    try {
      const config = tmp.file('b.json', JSON.stringify({ static_resources: { clusters: [{ type: 'STATIC', connect_timeout: '1s' }] } }));
      const r = await runProxy(['--mode', 'validate', '-c', config]);
      assert.equal(r.code, 1);
      assert.match(r.stdout + r.stderr, /static_resources\.clusters\[0\]\.name: value length must be at least 1 characters/);
    } finally {
      tmp.cleanup();
    }
  });
});
