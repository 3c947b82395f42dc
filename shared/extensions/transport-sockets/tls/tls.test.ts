import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import type { ConfigError } from '../../../config/config-error.js';
import type { JsonObject } from '../../../config/proto-json.js';
import { DOWNSTREAM_TLS_TYPE, makePki, UPSTREAM_TLS_TYPE, type Leaf, type TestPki } from '../../../../test/helpers/certs.js';
import { loadClusterTls, loadListenerTls, tlsContextConfig } from './context.js';
import { StaticSecrets } from './secrets.js';

const noSecrets = new StaticSecrets({}, []);

/**
 * TLS contexts as the supervisor loads them: what each side needs, what it refuses, a key checked
 * against its certificate. Handshakes with real clients: test/tls.test.ts and test/xds-cds-tls.test.ts.
 */

const read = (ds: JsonObject) => (typeof ds.filename === 'string' ? readFileSync(ds.filename) : typeof ds.inline_string === 'string' ? Buffer.from(ds.inline_string) : undefined);

let pki: TestPki;
let leaf: Leaf;
before(() => {
  pki = makePki();
  leaf = pki.leaf('server', { sans: ['DNS:a.example'], serial: '2001' });
});
after(() => pki.remove());

const certificate = () => ({ certificate_chain: { filename: leaf.certPath }, private_key: { filename: leaf.keyPath } });

function listenerErrors(transportSocket: object): [string, string][] {
  const errors: ConfigError[] = [];
  loadListenerTls({ name: 'l', filter_chains: [{ transport_socket: transportSocket }] }, 'l', read, errors, noSecrets);
  return errors.map((e) => [e.code, e.path]);
}

describe('the TLS transport socket', () => {
  it('is TLS by its typed_config; RawBuffer is not', () => {
    assert.equal(tlsContextConfig({ typed_config: { '@type': DOWNSTREAM_TLS_TYPE } })?.typeName, 'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext');
    assert.equal(tlsContextConfig({ typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' } }), undefined);
  });

  it("loads a listener's context with its certificate, by filter chain", () => {
    const errors: ConfigError[] = [];
    const loaded = loadListenerTls({ name: 'l', filter_chains: [{}, { transport_socket: { typed_config: { '@type': DOWNSTREAM_TLS_TYPE, common_tls_context: { tls_certificates: [certificate()], alpn_protocols: ['h2'] } } } }] }, 'l', read, errors, noSecrets);
    assert.deepEqual(errors, []);
    assert.deepEqual(Object.keys(loaded), ['1']);
    assert.equal(loaded['1']!.side, 'downstream');
    assert.deepEqual(loaded['1']!.alpn, ['h2']);
  });

  it('needs a certificate on a listener, and a CA to check client certificates against', () => {
    assert.deepEqual(listenerErrors({ typed_config: { '@type': DOWNSTREAM_TLS_TYPE, common_tls_context: {} } }), [['missing', 'l.filter_chains[0].transport_socket.typed_config.common_tls_context.tls_certificates']]);
    assert.deepEqual(listenerErrors({ typed_config: { '@type': DOWNSTREAM_TLS_TYPE, require_client_certificate: true, common_tls_context: { tls_certificates: [certificate()] } } }), [['missing', 'l.filter_chains[0].transport_socket.typed_config.require_client_certificate']]);
  });

  it("refuses the other side's context, and a key that is not its certificate's", () => {
    assert.deepEqual(listenerErrors({ typed_config: { '@type': UPSTREAM_TLS_TYPE } }), [['wrong_extension', 'l.filter_chains[0].transport_socket.typed_config']]);
    const other = pki.leaf('other', { sans: ['DNS:b.example'], serial: '2002' });
    const mismatched = { certificate_chain: { filename: leaf.certPath }, private_key: { filename: other.keyPath } };
    assert.deepEqual(listenerErrors({ typed_config: { '@type': DOWNSTREAM_TLS_TYPE, common_tls_context: { tls_certificates: [mismatched] } } }), [['load_failed', 'l.filter_chains[0].transport_socket.typed_config']]);
  });

  it("loads a cluster's context without a certificate, with its SNI", () => {
    const errors: ConfigError[] = [];
    const context = loadClusterTls({ name: 'c', transport_socket: { typed_config: { '@type': UPSTREAM_TLS_TYPE, sni: 'a.example', common_tls_context: { validation_context: { trusted_ca: { filename: pki.caPath } } } } } }, 'c', read, errors, noSecrets);
    assert.deepEqual(errors, []);
    assert.equal(context?.side, 'upstream');
    assert.equal(context?.sni, 'a.example');
    assert.ok(context?.ca);
  });
});
