import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { filterBootstrap, loadErrors, minimalBootstrap } from './helpers/bootstraps.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * An HTTP filter disabled on the connection manager (HttpFilter.disabled) and enabled where a
 * route or virtual host says so, as gateway control planes configure per-route filters, with
 * Envoy's rules (FilterChainUtility::createFilterChainForFactories, PerFilterConfigs, its
 * RouteFilterDisabledTest): the most specific entry decides; a FilterConfig with an empty
 * `config` enables; `disabled: true` disables; without an entry, HttpFilter.disabled holds.
 */

const FAULT = 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault';
const FILTER_CONFIG = 'type.googleapis.com/envoy.config.route.v3.FilterConfig';
const abort = (status: number) => ({ '@type': FAULT, abort: { http_status: status, percentage: { numerator: 100 } } });

let upstream: Upstream;
let proxy: RunningProxy;

before(async () => {
  upstream = await startUpstream('A');
  const routes = [
    { match: { prefix: '/default' }, route: { cluster: 'backend' } },
    { match: { prefix: '/empty' }, route: { cluster: 'backend' }, typed_per_filter_config: { fault: { '@type': FILTER_CONFIG, config: {} } } },
    { match: { prefix: '/own' }, route: { cluster: 'backend' }, typed_per_filter_config: { fault: { '@type': FILTER_CONFIG, config: abort(419) } } },
    { match: { prefix: '/plain' }, route: { cluster: 'backend' }, typed_per_filter_config: { fault: abort(420) } },
    { match: { prefix: '/off' }, route: { cluster: 'backend' }, typed_per_filter_config: { fault: { '@type': FILTER_CONFIG, disabled: true, config: { '@type': 'type.googleapis.com/not.a.Type' } } } },
  ];
  const bootstrap = filterBootstrap('per-route', [{ name: 'fault', typed_config: abort(418), disabled: true }], routes, upstream.port);
  // A second virtual host enables it for all its routes but one.
  const hcm = (bootstrap.static_resources as any).listeners[0].filter_chains[0].filters[0].typed_config;
  hcm.route_config.virtual_hosts.unshift({
    name: 'enabled',
    domains: ['enabled.example'],
    typed_per_filter_config: { fault: { '@type': FILTER_CONFIG, config: {} } },
    routes: [
      { match: { prefix: '/off' }, route: { cluster: 'backend' }, typed_per_filter_config: { fault: { '@type': FILTER_CONFIG, disabled: true } } },
      { match: { prefix: '/' }, route: { cluster: 'backend' } },
    ],
  });
  proxy = await startProxy(bootstrap, ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

const status = async (path: string, host?: string) => (await httpRequest(`http://127.0.0.1:${proxy.ports.get('per-route')}${path}`, host ? { headers: { host } } : {})).status;

describe('a filter disabled by default', () => {
  it('does not run where no route says so', async () => {
    assert.equal(await status('/default'), 200);
    assert.equal(await status('/off'), 200, 'disabled: true, its config unread');
  });

  it('runs where a route enables it: an empty FilterConfig with its own configuration, a FilterConfig, a plain per-route configuration', async () => {
    assert.equal(await status('/empty'), 418);
    assert.equal(await status('/own'), 419);
    assert.equal(await status('/plain'), 420);
  });

  it("runs on every route of a virtual host that enables it, but the one that disables it", async () => {
    assert.equal(await status('/anything', 'enabled.example'), 418);
    assert.equal(await status('/off', 'enabled.example'), 200);
  });
});

describe("the configuration's checks, in Envoy's words", () => {
  const HCM_PATH = 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config';
  const withHcm = (change: (hcm: any) => void) => {
    const doc = minimalBootstrap() as any;
    change(doc.static_resources.listeners[0].filter_chains[0].filters[0].typed_config);
    return loadErrors(doc);
  };

  it('the last filter of a chain cannot be disabled by default', () => {
    const errors = withHcm((hcm) => (hcm.http_filters[hcm.http_filters.length - 1].disabled = true));
    assert.deepEqual(errors.map((e) => [e.code, e.path]), [['conflict', `${HCM_PATH}.http_filters[0].disabled`]]);
    assert.equal(errors[0]!.detail, 'Error: the last (terminal) filter (envoy.filters.http.router) in the chain cannot be disabled by default.');
  });

  it('a FilterConfig that neither configures nor disables is an error; an empty Any elsewhere names no extension', () => {
    const vhost = (over: object) => withHcm((hcm) => Object.assign(hcm.route_config.virtual_hosts[0], over));
    const errors = vhost({ typed_per_filter_config: { fault: { '@type': FILTER_CONFIG, is_optional: true } } });
    assert.deepEqual(errors.map((e) => [e.code, e.detail]), [['missing', 'Empty route/virtual host per filter configuration for fault filter']]);
    assert.deepEqual(vhost({ typed_per_filter_config: { fault: {} } }).map((e) => e.code), ['unsupported_extension']);
    assert.deepEqual(withHcm((hcm) => (hcm.http_filters[0].typed_config = {})).map((e) => e.code), ['unsupported_extension']);
  });

  it('a FilterConfig is_optional takes a type this proxy does not know, as Envoy (the filter is enabled, unconfigured)', () => {
    const errors = withHcm((hcm) => (hcm.route_config.virtual_hosts[0].typed_per_filter_config = { fault: { '@type': FILTER_CONFIG, is_optional: true, config: { '@type': 'type.googleapis.com/not.a.Type' } } }));
    assert.deepEqual(errors, []);
  });
});
