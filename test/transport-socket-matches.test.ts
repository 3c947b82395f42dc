import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { renameSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { makePki, UPSTREAM_TLS_TYPE, type TestPki } from './helpers/certs.js';
import { tempDir } from './helpers/cli.js';
import { loadErrors, routesListener } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';

/**
 * Cluster.transport_socket_matches, as Envoy's TransportSocketMatcherImpl: each endpoint's
 * connections use the first match its `envoy.transport_socket_match` metadata (else its
 * locality's) satisfies, else the cluster's transport_socket; an empty match takes every
 * endpoint; health checks go over the host's own socket; `cluster.<name>.<match>.total_match_count`
 * counts the hosts. Real TLS upstreams with their own certificates and SNI, a plaintext one beside
 * them in the same cluster, and a match's CA from SDS.
 */

const SECRET_URL = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';
const RAW_BUFFER = { name: 'envoy.transport_sockets.raw_buffer', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' } };

let pki: TestPki;
const servers: Server[] = [];
let tlsA = 0;
let tlsB = 0;
let plain = 0;
let proxy: RunningProxy;
let sds: ReturnType<typeof tempDir>;
let rotatingPath = '';

/** An upstream that names itself, and says the SNI it was asked for (none over plaintext). */
function listen(server: Server, name: string): Promise<number> {
  server.on('request', (req, res) => {
    req.resume();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ name, sni: (req.socket as TLSSocket).servername ?? null }));
  });
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

const upstreamTls = (sni: string, validation: object) => ({
  name: 'envoy.transport_sockets.tls',
  typed_config: { '@type': UPSTREAM_TLS_TYPE, sni, common_tls_context: { validation_context: validation } },
});
const verify = (san: string) => ({ trusted_ca: { filename: pki.caPath }, match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: san } }] });
const endpoint = (port: number, tls?: string) => ({
  endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } },
  ...(tls ? { metadata: { filter_metadata: { 'envoy.transport_socket_match': { tls } } } } : {}),
});

const listener = (name: string, cluster: string) => routesListener(name, [{ match: { prefix: '/' }, route: { cluster } }]);

before(async () => {
  pki = makePki();
  const a = pki.leaf('a', { sans: ['DNS:a.internal'], serial: 'A1' });
  const b = pki.leaf('b', { sans: ['DNS:b.internal'], serial: 'B1' });
  tlsA = await listen(createHttpsServer({ cert: a.cert, key: a.key }), 'A');
  tlsB = await listen(createHttpsServer({ cert: b.cert, key: b.key }), 'B');
  plain = await listen(createHttpServer(), 'P');
  // Match b's CA comes from a file over SDS.
  sds = tempDir('proxy-tsm-sds-');
  const caSecret = { '@type': SECRET_URL, name: 'b-ca', validation_context: { trusted_ca: { inline_string: pki.ca }, match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'b.internal' } }] } };
  const caPath = sds.file('b-ca.json', JSON.stringify({ resources: [caSecret] }));
  // Another cluster's match b trusts, at first, a CA that signed nothing: B is unreachable until the secret rotates.
  const wrongCa = { ...caSecret, name: 'b-ca-rotating', validation_context: { ...caSecret.validation_context, trusted_ca: { inline_string: pki.otherCa().ca } } };
  rotatingPath = sds.file('b-ca-rotating.json', JSON.stringify({ resources: [wrongCa] }));
  const rotatingMatch = {
    name: 'b',
    match: { tls: 'b' },
    transport_socket: {
      name: 'envoy.transport_sockets.tls',
      typed_config: { '@type': UPSTREAM_TLS_TYPE, sni: 'b.internal', common_tls_context: { validation_context_sds_secret_config: { name: 'b-ca-rotating', sds_config: { path_config_source: { path: rotatingPath }, resource_api_version: 'V3' } } } },
    },
  };
  const matches = [
    { name: 'a', match: { tls: 'a' }, transport_socket: upstreamTls('a.internal', verify('a.internal')) },
    {
      name: 'b',
      match: { tls: 'b' },
      transport_socket: {
        name: 'envoy.transport_sockets.tls',
        typed_config: { '@type': UPSTREAM_TLS_TYPE, sni: 'b.internal', common_tls_context: { validation_context_sds_secret_config: { name: 'b-ca', sds_config: { path_config_source: { path: caPath }, resource_api_version: 'V3' } } } },
      },
    },
  ];
  const cluster = (name: string, more: object) => ({ name, type: 'STATIC', connect_timeout: '1s', ...more });
  proxy = await startProxy({
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: ['mixed', 'locality', 'catchall', 'checked', 'rotated'].map((n) => listener(n, n)),
      clusters: [
        // One cluster, three sockets: A over TLS as a.internal, B over TLS as b.internal, P plaintext (no match: the cluster's own, none).
        cluster('mixed', { transport_socket_matches: matches, load_assignment: { cluster_name: 'mixed', endpoints: [{ lb_endpoints: [endpoint(tlsA, 'a'), endpoint(tlsB, 'b'), endpoint(plain)] }] } }),
        // The locality's metadata decides for its endpoints when theirs does not.
        cluster('locality', {
          transport_socket_matches: matches,
          load_assignment: { cluster_name: 'locality', endpoints: [{ metadata: { filter_metadata: { 'envoy.transport_socket_match': { tls: 'a' } } }, lb_endpoints: [endpoint(tlsA)] }] },
        }),
        // A TLS cluster whose last match is empty: it takes every endpoint no earlier match took, here to plaintext.
        cluster('catchall', {
          transport_socket: upstreamTls('a.internal', verify('a.internal')),
          transport_socket_matches: [matches[0], { name: 'raw', match: {}, transport_socket: RAW_BUFFER }],
          load_assignment: { cluster_name: 'catchall', endpoints: [{ lb_endpoints: [endpoint(plain), endpoint(tlsA, 'a')] }] },
        }),
        cluster('rotated', { transport_socket_matches: [rotatingMatch], load_assignment: { cluster_name: 'rotated', endpoints: [{ lb_endpoints: [endpoint(tlsB, 'b')] }] } }),
        // Health checks connect over each host's own socket: TLS to A, plaintext to P.
        cluster('checked', {
          transport_socket_matches: matches,
          health_checks: [{ timeout: '1s', interval: '0.2s', unhealthy_threshold: 1, healthy_threshold: 1, http_health_check: { path: '/healthz' } }],
          load_assignment: { cluster_name: 'checked', endpoints: [{ lb_endpoints: [endpoint(tlsA, 'a'), endpoint(plain)] }] },
        }),
      ],
    },
  }, ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  for (const s of servers) {
    s.close();
    s.closeAllConnections();
  }
  pki.remove();
  sds.cleanup();
});

async function seen(listener: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get(listener)}/`);
    assert.equal(r.status, 200, r.body);
    const { name, sni } = JSON.parse(r.body) as { name: string; sni: string | null };
    out.push(`${name}:${sni ?? 'plaintext'}`);
  }
  return [...new Set(out)].sort();
}

describe('transport_socket_matches', () => {
  it("each endpoint gets the socket its metadata matches: TLS with its own SNI and CA, or the cluster's own", async () => {
    assert.deepEqual(await seen('mixed', 6), ['A:a.internal', 'B:b.internal', 'P:plaintext']);
    for (const [match, count] of [['a', 1], ['b', 1], ['default', 1]] as const) {
      assert.equal(await statValue(proxy, `cluster.mixed.${match}.total_match_count`), count, match);
    }
  });

  it("a locality's metadata matches for its endpoints", async () => {
    assert.deepEqual(await seen('locality', 2), ['A:a.internal']);
    assert.equal(await statValue(proxy, 'cluster.locality.a.total_match_count'), 1);
  });

  it('an empty match takes every endpoint no earlier match took', async () => {
    assert.deepEqual(await seen('catchall', 4), ['A:a.internal', 'P:plaintext']);
    assert.equal(await statValue(proxy, 'cluster.catchall.raw.total_match_count'), 1);
    assert.equal(await statValue(proxy, 'cluster.catchall.default.total_match_count'), 0);
  });

  it("health checks go over each host's own transport socket", async () => {
    const flags = async () => {
      const text = (await httpRequest(`http://${proxy.admin}/clusters`)).body;
      return [tlsA, plain].map((port) => new RegExp(`^checked::127\\.0\\.0\\.1:${port}::health_flags::(.*)$`, 'm').exec(text)?.[1]);
    };
    await waitFor('both hosts healthy', async () => ((await flags()).every((f) => f === 'healthy') ? true : undefined));
    assert.deepEqual(await seen('checked', 4), ['A:a.internal', 'P:plaintext']);
  });

  it("a match's SDS secret rotates: new connections verify with the new CA", async () => {
    const url = `http://127.0.0.1:${proxy.ports.get('rotated')}/`;
    assert.equal((await httpRequest(url)).status, 503, 'B is not trusted with the first CA');
    const good = { '@type': SECRET_URL, name: 'b-ca-rotating', validation_context: { trusted_ca: { inline_string: pki.ca }, match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'b.internal' } }] } };
    renameSync(sds.file('b-ca-rotating.next', JSON.stringify({ resources: [good] })), rotatingPath);
    const r = await waitFor('B trusted after the rotation', async () => {
      const got = await httpRequest(url);
      return got.status === 200 ? got : undefined;
    });
    assert.deepEqual(JSON.parse(r.body), { name: 'B', sni: 'b.internal' });
  });

  it('refuses the xDS matcher form by name, and a match socket that is neither TLS nor raw_buffer', () => {
    const base = { name: 'c', type: 'STATIC', connect_timeout: '1s', load_assignment: { cluster_name: 'c', endpoints: [] } };
    const messages = (c: object) => loadErrors({ static_resources: { clusters: [{ ...base, ...c }] } }).map(String);
    assert.ok(messages({ transport_socket_matcher: {} }).some((m) => m.includes('transport_socket_matcher')));
    const odd = { name: 'x', match: {}, transport_socket: { name: 'envoy.transport_sockets.tap', typed_config: { '@type': 'type.googleapis.com/google.protobuf.Struct' } } };
    assert.ok(messages({ transport_socket_matches: [odd] }).some((m) => m.includes('transport_socket_matches[0].transport_socket')));
  });
});
