import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chainMatchOf, selectChain } from '../shared/chain-match.js';

/** Envoy's filter-chain selection order (the TLS inspector's own tests are in its folder). */

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
