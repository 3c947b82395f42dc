import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { connect } from 'node:tls';
import { describe, it } from 'node:test';
import { chainMatchOf, selectChain } from '../shared/chain-match.js';
import { parseClientHello } from '../worker/tls/client-hello.js';

/** The TLS inspector's ClientHello reading, and Envoy's filter-chain selection order. */

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

describe('filter chain selection', () => {
  const chain = (name: string, match: object) => ({ name, match: chainMatchOf({ filter_chain_match: match }) });
  const facts = (over: object) => ({ destinationPort: 443, serverName: undefined, transportProtocol: 'tls' as const, applicationProtocols: [], ...over });
  const chains = [
    chain('exact', { server_names: ['api.example.com'] }),
    chain('wildcard', { server_names: ['*.example.com'] }),
    chain('deep', { server_names: ['*.b.example.com'] }),
    chain('h2', { application_protocols: ['h2'] }),
    chain('tls', { transport_protocol: 'tls' }),
    chain('plain', { transport_protocol: 'raw_buffer' }),
    chain('port', { destination_port: 8443 }),
  ];
  const pick = (over: object) => selectChain(chains, facts(over))?.name;

  it('prefers an exact server name, then the longest wildcard suffix', () => {
    assert.equal(pick({ serverName: 'api.example.com' }), 'exact');
    assert.equal(pick({ serverName: 'www.example.com' }), 'wildcard');
    assert.equal(pick({ serverName: 'x.b.example.com' }), 'deep');
  });

  it('falls back to chains without server names, then decides by transport before ALPN', () => {
    assert.equal(pick({ serverName: 'other.test', applicationProtocols: ['h2'] }), 'tls');
    assert.equal(pick({ transportProtocol: 'raw_buffer' }), 'plain');
    const byAlpn = [chain('h2', { application_protocols: ['h2'] }), chain('any', {})];
    assert.equal(selectChain(byAlpn, facts({ applicationProtocols: ['http/1.1', 'h2'] }))?.name, 'h2');
    assert.equal(selectChain(byAlpn, facts({ applicationProtocols: ['http/1.1'] }))?.name, 'any');
  });

  it('decides by destination port first', () => {
    assert.equal(pick({ destinationPort: 8443, serverName: 'api.example.com' }), 'port');
  });

  it('finds nothing when every chain names something else', () => {
    assert.equal(selectChain([chain('only', { server_names: ['a.test'] })], facts({ serverName: 'b.test' })), undefined);
  });
});
