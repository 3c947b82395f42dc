import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigError } from '../../../config/config-error.js';
import { checkRawBuffer, isRawBuffer } from './raw-buffer.js';

describe('the raw_buffer transport socket', () => {
  it('is RawBuffer by its typed_config, or by its name without one', () => {
    assert.equal(isRawBuffer({ name: 'x', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' } }), true);
    assert.equal(isRawBuffer({ name: 'envoy.transport_sockets.raw_buffer' }), true);
    assert.equal(isRawBuffer({ name: 'raw_buffer' }), true);
    assert.equal(isRawBuffer({ name: 'envoy.transport_sockets.tls' }), false);
    assert.equal(isRawBuffer({ name: 'raw_buffer', typed_config: { '@type': 'type.googleapis.com/other.Type' } }), false);
  });

  it('says what a transport socket that is neither needs', () => {
    const errors: ConfigError[] = [];
    checkRawBuffer({ name: 'envoy.transport_sockets.tls' }, 'c.transport_socket', 'an UpstreamTlsContext', errors);
    assert.deepEqual(errors.map((e) => [e.code, e.path]), [['missing', 'c.transport_socket']]);
    assert.match(errors[0]!.detail, /an UpstreamTlsContext for TLS, or RawBuffer for plaintext/);
  });
});
