import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { connect } from 'node:tls';
import { describe, it } from 'node:test';
import { parseClientHello } from './client-hello.js';
import { tlsInspector } from './tls-inspector.js';
import { counter } from '../../../../../test/helpers/filter-harness.js';

/** envoy.filters.listener.tls_inspector alone (Envoy's tls_inspector_test): the ClientHello read, what it tells filter chain matching, its figures. */

/** The first bytes a real TLS client (node:tls) sends. */
async function clientHelloBytes(options: { servername?: string; ALPNProtocols?: string[] }): Promise<Buffer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const received = new Promise<Buffer>((resolve) => server.once('connection', (s) => s.once('data', (d: Buffer) => { resolve(d); s.destroy(); })));
  const client = connect({ host: '127.0.0.1', port: (server.address() as { port: number }).port, ...options });
  client.on('error', () => {});
  const bytes = await received;
  client.destroy();
  server.close();
  return bytes;
}

describe('ClientHello', () => {
  it('reads the server name and the ALPN protocols of a real ClientHello', async () => {
    const bytes = await clientHelloBytes({ servername: 'API.Example.com', ALPNProtocols: ['h2', 'http/1.1'] });
    assert.deepEqual(parseClientHello(bytes), { done: true, hello: { tls: true, serverName: 'api.example.com', alpn: ['h2', 'http/1.1'] } });
  });

  it('asks for more while the ClientHello is incomplete, at any cut', async () => {
    const bytes = await clientHelloBytes({ servername: 'example.com' });
    for (const cut of [1, 5, 9, 40, bytes.length - 1]) assert.deepEqual(parseClientHello(bytes.subarray(0, cut)), { done: false }, `cut at ${cut}`);
  });

  it('takes a ClientHello split over two TLS records', async () => {
    const bytes = await clientHelloBytes({ servername: 'split.test', ALPNProtocols: ['h2'] });
    const body = bytes.subarray(5);
    const record = (part: Buffer) => Buffer.concat([Buffer.from([22, 3, 1, part.length >> 8, part.length & 0xff]), part]);
    const split = Buffer.concat([record(body.subarray(0, 30)), record(body.subarray(30))]);
    assert.deepEqual(parseClientHello(split), { done: true, hello: { tls: true, serverName: 'split.test', alpn: ['h2'] } });
  });

  it('says plaintext for anything else', () => {
    assert.deepEqual(parseClientHello(Buffer.from('GET / HTTP/1.1\r\n')), { done: true, hello: { tls: false, serverName: undefined, alpn: [] } });
    assert.deepEqual(parseClientHello(Buffer.from('PRI * HTTP/2.0\r\n')), { done: true, hello: { tls: false, serverName: undefined, alpn: [] } });
  });
});


describe('the TLS inspector', () => {
  it('gives filter chain matching the server name, tls and the ALPN protocols, and counts them', async () => {
    const make = tlsInspector();
    const before = ['tls_found', 'sni_found', 'alpn_found', 'tls_not_found'].map((n) => counter(`tls_inspector.${n}`));
    const bytes = await clientHelloBytes({ servername: 'a.example', ALPNProtocols: ['h2'] });
    const inspector = make();
    assert.equal(inspector.onData(bytes.subarray(0, 10), {}), undefined, 'more bytes needed');
    assert.deepEqual(inspector.onData(bytes, {}), { findings: { serverName: 'a.example', transportProtocol: 'tls', applicationProtocols: ['h2'] } });
    assert.deepEqual(make().onData(Buffer.from('GET / HTTP/1.1\r\n'), {}), { findings: { serverName: undefined, transportProtocol: 'raw_buffer', applicationProtocols: [] } });
    const after = ['tls_found', 'sni_found', 'alpn_found', 'tls_not_found'].map((n) => counter(`tls_inspector.${n}`));
    assert.deepEqual(after.map((v, i) => v - before[i]!), [1, 1, 1, 1]);
  });
});
