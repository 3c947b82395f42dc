import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { connect, type ConnectionOptions } from 'node:tls';
import { loadErrors, routesListener } from './helpers/bootstraps.js';
import { downstreamTls, makePki, type Leaf, type TestPki } from './helpers/certs.js';
import { startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * A listener's TLS session resumption, as its DownstreamTlsContext sets it (Envoy's
 * ssl_integration_test resumption cases): tickets on by default, sealed with one key for every
 * worker; session_ticket_keys' key shared by every proxy given it; session IDs (TLS 1.2) unless
 * disable_stateful_session_resumption; none of either when both are disabled.
 */

let pki: TestPki;
let leaf: Leaf;
const key = randomBytes(80);

before(() => {
  pki = makePki();
  leaf = pki.leaf('server', { sans: ['DNS:a.example'], serial: '3001' });
});

after(async () => {
  await stopAllProxies();
  pki.remove();
});

async function tlsProxy(context: object, workers = 2): Promise<RunningProxy> {
  const listener = routesListener('tls', [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }]) as { filter_chains: { transport_socket?: object }[] };
  listener.filter_chains[0]!.transport_socket = downstreamTls(leaf, { context });
  return startProxy({ admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }, static_resources: { listeners: [listener] } }, ['--concurrency', String(workers)]);
}

/** One connection: a request answered, whether it resumed `session`, and the session the server gave. */
function handshake(port: number, options: ConnectionOptions = {}): Promise<{ reused: boolean; session: Buffer | undefined }> {
  return new Promise((resolve, reject) => {
    let session: Buffer | undefined;
    let reused = false;
    const socket = connect({ host: '127.0.0.1', port, ca: pki.ca, servername: 'a.example', ...options }, () => {
      reused = socket.isSessionReused();
      socket.write('GET / HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n');
    });
    socket.on('session', (s: Buffer) => (session ??= s));
    socket.on('data', () => {});
    socket.on('end', () => resolve({ reused, session }));
    socket.on('error', reject);
  });
}

async function resumed(port: number, times: number, options: ConnectionOptions = {}): Promise<boolean[]> {
  const first = await handshake(port, options);
  assert.ok(first.session, 'the server gave a session');
  const out: boolean[] = [];
  for (let i = 0; i < times; i++) out.push((await handshake(port, { ...options, session: first.session })).reused);
  return out;
}

describe('TLS session resumption', () => {
  it('by default, a ticket resumes on whichever worker takes the next connection', async () => {
    const proxy = await tlsProxy({});
    assert.deepEqual(await resumed(proxy.ports.get('tls')!, 8), Array(8).fill(true));
    await proxy.stop();
  });

  it("session_ticket_keys: two proxies given one key resume each other's tickets; without it they do not", async () => {
    const keyed = { session_ticket_keys: { keys: [{ inline_bytes: key.toString('base64') }] } };
    const a = await tlsProxy(keyed, 1);
    const b = await tlsProxy(keyed, 1);
    const c = await tlsProxy({}, 1);
    const { session } = await handshake(a.ports.get('tls')!);
    assert.equal((await handshake(b.ports.get('tls')!, { session })).reused, true);
    assert.equal((await handshake(c.ports.get('tls')!, { session })).reused, false);
    for (const p of [a, b, c]) await p.stop();
  });

  it('TLS 1.2 session IDs resume on the worker that made them, unless disable_stateful_session_resumption', async () => {
    const tls12 = { maxVersion: 'TLSv1.2' as const };
    const stateful = await tlsProxy({ disable_stateless_session_resumption: true }, 1);
    assert.deepEqual(await resumed(stateful.ports.get('tls')!, 3, tls12), [true, true, true]);
    await stateful.stop();
    const none = await tlsProxy({ disable_stateless_session_resumption: true, disable_stateful_session_resumption: true }, 1);
    const first = await handshake(none.ports.get('tls')!, tls12);
    assert.equal(first.session === undefined || !(await handshake(none.ports.get('tls')!, { ...tls12, session: first.session })).reused, true);
    await none.stop();
  });

  it("refuses more keys than Node's TLS can take, and a key of the wrong length, in Envoy's words", () => {
    const errorsOf = (context: object) => {
      const listener = routesListener('tls', [{ match: { prefix: '/' }, direct_response: { status: 200 } }]) as { filter_chains: { transport_socket?: object }[] };
      listener.filter_chains[0]!.transport_socket = downstreamTls(leaf, { context });
      return loadErrors({ static_resources: { listeners: [listener] } }).map((e) => [e.code, e.detail]);
    };
    const inline = (bytes: number) => ({ inline_bytes: randomBytes(bytes).toString('base64') });
    assert.deepEqual(errorsOf({ session_ticket_keys: { keys: [inline(80), inline(80)] } }).map(([code]) => code), ['unsupported']);
    assert.deepEqual(errorsOf({ session_ticket_keys: { keys: [inline(48)] } }), [['invalid', 'Incorrect TLS session ticket key length. Length 48, expected length 80.']]);
  });
});
