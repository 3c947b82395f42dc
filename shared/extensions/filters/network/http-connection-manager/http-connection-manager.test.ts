import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HCM_TYPE, loadErrors, minimalBootstrap } from '../../../../../test/helpers/bootstraps.js';
import { extensionByName } from '../../../registry.js';

/**
 * The HTTP connection manager as the loader takes it: its codec, its upgrades, the network filter
 * that ends its chain. What it does with connections is the workers' (worker/http/), tested with
 * real clients (test/serve-http.test.ts and the others).
 */

type Doc = { static_resources: { listeners: { filter_chains: { filters: { name?: string; typed_config: Record<string, unknown> }[] }[] }[] } };

function withHcm(change: (hcm: Record<string, unknown>) => void): Doc {
  const doc = minimalBootstrap() as Doc;
  const hcm = doc.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config;
  assert.equal(hcm['@type'], HCM_TYPE);
  change(hcm);
  return doc;
}

const HCM_PATH = 'static_resources.listeners[0].filter_chains[0].filters[0]';

describe('the HTTP connection manager descriptor', () => {
  it('is found by its name, its v2 name and its type, and ends a chain', () => {
    const hcm = extensionByName('envoy.http_connection_manager');
    assert.equal(hcm?.name, 'envoy.filters.network.http_connection_manager');
    assert.equal(hcm?.category, 'envoy.filters.network');
    assert.deepEqual(loadErrors(withHcm(() => {})), []);
  });

  it('refuses HTTP/3, which needs QUIC', () => {
    const errors = loadErrors(withHcm((hcm) => (hcm.codec_type = 'HTTP3')));
    assert.deepEqual(errors.map((e) => [e.code, e.path]), [['unsupported', `${HCM_PATH}.typed_config.codec_type`]]);
  });

  it('refuses two upgrade configs of one type, in Envoy\'s words, whatever their case', () => {
    const errors = loadErrors(withHcm((hcm) => (hcm.upgrade_configs = [{ upgrade_type: 'websocket' }, { upgrade_type: 'WebSocket' }])));
    assert.deepEqual(errors.map((e) => [e.code, e.path]), [['duplicate', `${HCM_PATH}.typed_config.upgrade_configs[1].upgrade_type`]]);
    assert.equal(errors[0]!.detail, "Error: multiple upgrade configs with the same name: 'WebSocket'");
  });

  it('is refused anywhere but last in its filter chain', () => {
    const doc = withHcm(() => {});
    const chain = doc.static_resources.listeners[0]!.filter_chains[0]!;
    chain.filters.push({ name: 'tcp', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 't', cluster: 'backend' } });
    assert.deepEqual(loadErrors(doc).map((e) => [e.code, e.path]), [['conflict', `${HCM_PATH}`]]);
  });

  it('refuses a field it does not implement, naming it and the reason', () => {
    const errors = loadErrors(withHcm((hcm) => (hcm.http3_protocol_options = {})));
    assert.deepEqual(errors.map((e) => e.code), ['unsupported_field']);
    assert.match(errors[0]!.detail, /HTTP\/3 \(QUIC\) is not available in Node 20/);
  });
});
