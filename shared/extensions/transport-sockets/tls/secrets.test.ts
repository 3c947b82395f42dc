import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigError } from '../../../config/config-error.js';
import { inlineSecretFiles, mergeValidationContexts, resolveSecretRef, secretFiles, secretWatchedDirectory, StaticSecrets, type SecretUse } from './secrets.js';

/** The secrets a TLS context names, as Envoy's secret manager and SdsApi treat them (sds_api_test, secret_manager_impl_test). */

describe('secrets', () => {
  it('merges a combined validation context as protobuf MergeFrom: the secret over the default', () => {
    const merged = mergeValidationContexts(
      { allow_expired_certificate: true, trusted_ca: { filename: '/default.pem' }, match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'first san' } }], verify_certificate_hash: ['aa'] },
      { trusted_ca: { inline_string: 'PEM' }, match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'second san' } }], verify_certificate_spki: ['bb'] },
    );
    assert.deepEqual(merged, {
      allow_expired_certificate: true,
      // A DataSource is a oneof: the secret's replaces the default's whole.
      trusted_ca: { inline_string: 'PEM' },
      match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'first san' } }, { san_type: 'DNS', matcher: { exact: 'second san' } }],
      verify_certificate_hash: ['aa'],
      verify_certificate_spki: ['bb'],
    });
    // Booleans or-ed: a secret's false does not undo the default's true.
    assert.equal(mergeValidationContexts({ allow_expired_certificate: true }, { allow_expired_certificate: false }).allow_expired_certificate, true);
  });

  it('finds static secrets by kind and name, in Envoy\'s words when not', () => {
    const errors: ConfigError[] = [];
    const statics = new StaticSecrets({ static_resources: { secrets: [{ name: 'a', tls_certificate: { certificate_chain: { inline_string: 'x' } } }, { name: 'a', validation_context: {} }, { name: 'none' }] } }, errors);
    assert.deepEqual(errors.map(String), ['static_resources.secrets[2]: Secret type not implemented (set tls_certificate, validation_context, session_ticket_keys or generic_secret)']);
    const use: SecretUse = { keys: [], notReady: [] };
    const found = resolveSecretRef('tls_certificate', { name: 'a' }, 'p', statics, use, errors);
    assert.deepEqual(found, { json: { certificate_chain: { inline_string: 'x' } }, path: 'static_resources.secrets[0].tls_certificate', secretName: 'a', dynamic: false });
    assert.equal(resolveSecretRef('session_ticket_keys', { name: 'a' }, 'p', statics, use, errors), undefined);
    assert.equal(resolveSecretRef('validation_context', { name: 'b' }, 'q', statics, use, errors), undefined);
    assert.deepEqual(errors.slice(1).map(String), ['p.name: Unknown tls session ticket keys: a', 'q.name: Unknown static certificate validation context: b']);
  });

  it('marks a secret from SDS that has not come as not ready, by its kind, name and source', () => {
    const use: SecretUse = { keys: [], notReady: [] };
    const errors: ConfigError[] = [];
    assert.equal(resolveSecretRef('tls_certificate', { name: 'c', sds_config: { ads: {} } }, 'p', new StaticSecrets({}, []), use, errors), undefined);
    assert.deepEqual(errors, []);
    assert.deepEqual(use.notReady, ['tls_certificate\nc\n{"ads":{}}']);
    assert.deepEqual(use.keys, use.notReady);
  });

  it('reads the files a secret names in, and knows which to watch', () => {
    const secret = { name: 's', tls_certificate: { certificate_chain: { filename: '/d/cert.pem' }, private_key: { filename: '/d/key.pem' }, watched_directory: { path: '/d' } } };
    assert.deepEqual(secretFiles(secret), ['/d/cert.pem', '/d/key.pem']);
    assert.equal(secretWatchedDirectory(secret), '/d');
    const inlined = inlineSecretFiles(secret, (f) => Buffer.from(f));
    assert.deepEqual(inlined.tls_certificate, { certificate_chain: { inline_bytes: Buffer.from('/d/cert.pem').toString('base64') }, private_key: { inline_bytes: Buffer.from('/d/key.pem').toString('base64') }, watched_directory: { path: '/d' } });
    // A generic secret is kept as it came: its users read it.
    const generic = { name: 'g', generic_secret: { secret: { filename: '/d/token' } } };
    assert.equal(inlineSecretFiles(generic, () => Buffer.from('')), generic);
  });
});
