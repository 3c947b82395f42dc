import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HCM_TYPE, loadErrors, minimalBootstrap } from '../../../../../test/helpers/bootstraps.js';

/**
 * envoy.filters.http.router as the loader takes it: the chain's terminal filter, last of
 * http_filters and of an upgrade's filters, in Envoy's words (FilterChainUtility::checkFinalFilter).
 * What it does with a request is the workers' router, tested with real upstreams (test/retries.test.ts,
 * test/serve-http.test.ts and the others).
 */

const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
const CORS = { name: 'cors', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' } };

function withFilters(filters: object[], upgradeFilters?: object[]): object {
  const doc = minimalBootstrap() as { static_resources: { listeners: { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] }[] } };
  const hcm = doc.static_resources.listeners[0]!.filter_chains[0]!.filters[0]!.typed_config;
  assert.equal(hcm['@type'], HCM_TYPE);
  hcm.http_filters = filters;
  if (upgradeFilters) hcm.upgrade_configs = [{ upgrade_type: 'websocket', filters: upgradeFilters }];
  return doc;
}

const HCM_PATH = 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config';

describe('the router filter', () => {
  it('ends the chain: after the other filters it loads', () => {
    assert.deepEqual(loadErrors(withFilters([CORS, ROUTER])), []);
  });

  it('refuses a router before another filter, and a chain that another filter ends, in Envoy\'s words', () => {
    const errors = loadErrors(withFilters([ROUTER, CORS]));
    assert.deepEqual(errors.map((e) => [e.code, e.path]), [
      ['conflict', `${HCM_PATH}.http_filters[0]`],
      ['conflict', `${HCM_PATH}.http_filters[1]`],
    ]);
    assert.equal(errors[0]!.detail, 'terminal filter named envoy.filters.http.router of type envoy.filters.http.router must be the last filter in a http filter chain');
    assert.equal(errors[1]!.detail, 'non-terminal filter named cors of type envoy.filters.http.cors is the last filter in a http filter chain');
  });

  it('is checked in an upgrade\'s filters too', () => {
    const errors = loadErrors(withFilters([ROUTER], [ROUTER, CORS]));
    assert.deepEqual(errors.map((e) => [e.code, e.path]), [
      ['conflict', `${HCM_PATH}.upgrade_configs[0].filters[0]`],
      ['conflict', `${HCM_PATH}.upgrade_configs[0].filters[1]`],
    ]);
    assert.match(errors[0]!.detail, /must be the last filter in a http upgrade filter chain$/);
  });

  it('takes start_child_span and suppress_envoy_headers, and refuses the fields it does not implement, naming them', () => {
    const router = (config: object) => ({ ...ROUTER, typed_config: { ...ROUTER.typed_config, ...config } });
    assert.deepEqual(loadErrors(withFilters([router({ start_child_span: true, suppress_envoy_headers: true })])), []);
    assert.deepEqual(loadErrors(withFilters([router({ respect_expected_rq_timeout: true })])).map((e) => [e.code, e.path]), [['unsupported_field', `${HCM_PATH}.http_filters[0].typed_config.respect_expected_rq_timeout`]]);
  });
});
