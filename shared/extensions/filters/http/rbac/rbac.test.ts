import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rbacFactory } from './rbac.js';
import { counter, decode, routesOf } from '../../../../../test/helpers/filter-harness.js';

/** envoy.filters.http.rbac alone (Envoy's rbac_filter_test): verdicts, response details, stat names, dynamic metadata. */

const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBACPerRoute';
const byPort = (port: number) => ({ permissions: [{ destination_port: port }], principals: [{ any: true }] });
const byPath = (prefix: string) => ({ permissions: [{ url_path: { path: { prefix } } }], principals: [{ any: true }] });

describe('the RBAC filter', () => {
  it('ALLOW: lets a matching request through and refuses the others with 403, naming no policy in the details', async () => {
    const f = rbacFactory('envoy.filters.http.rbac', { rules: { action: 'ALLOW', policies: { foo: byPort(10000) } } }, 'rbac1');
    const ok = await decode(f);
    assert.equal(ok.decision, 'continue');
    assert.deepEqual(ok.request.metadata()['envoy.filters.http.rbac'], { enforced_effective_policy_id: 'foo', enforced_engine_result: 'allowed' });
    const refused = await decode(f, { connection: { localPort: 456 } });
    assert.equal(refused.decision, 'stop');
    assert.deepEqual([refused.request.replied?.status, refused.request.replied?.body], [403, 'RBAC: access denied']);
    assert.equal(refused.request.details, 'rbac_access_denied_matched_policy[none]');
    assert.deepEqual(refused.request.metadata()['envoy.filters.http.rbac'], { enforced_engine_result: 'denied' });
    assert.deepEqual([counter('http.rbac1.rbac.allowed'), counter('http.rbac1.rbac.denied')], [1, 1]);
  });

  it('DENY: refuses what a policy matches, naming it (white space as _)', async () => {
    const f = rbacFactory('envoy.filters.http.rbac', { rules: { action: 'DENY', policies: { 'no admin': byPath('/admin') } } }, 'rbac2');
    assert.equal((await decode(f, { path: '/public' })).decision, 'continue');
    const refused = await decode(f, { path: '/admin/x' });
    assert.equal(refused.request.details, 'rbac_access_denied_matched_policy[no_admin]');
  });

  it("names its counters as Envoy's: the rules' prefixes joined with a dot", async () => {
    const f = rbacFactory(
      'envoy.filters.http.rbac',
      { rules: { action: 'ALLOW', policies: { foo: byPort(10000) } }, rules_stat_prefix: 'rules_prefix_', shadow_rules: { action: 'DENY', policies: { bar: byPort(10000) } }, shadow_rules_stat_prefix: 'shadow_prefix_' },
      'rbac3',
    );
    const r = await decode(f);
    assert.equal(r.decision, 'continue');
    assert.equal(counter('http.rbac3.rbac.rules_prefix_.allowed'), 1);
    assert.equal(counter('http.rbac3.rbac.shadow_prefix_.shadow_denied'), 1);
    assert.deepEqual(r.request.metadata()['envoy.filters.http.rbac'], {
      shadow_prefix_shadow_effective_policy_id: 'bar',
      shadow_prefix_shadow_engine_result: 'denied',
      rules_prefix_enforced_effective_policy_id: 'foo',
      rules_prefix_enforced_engine_result: 'allowed',
    });
  });

  it('shadow rules only: counted and in the metadata, never refusing', async () => {
    const f = rbacFactory('envoy.filters.http.rbac', { shadow_rules: { action: 'ALLOW', policies: { foo: byPort(1) } } }, 'rbac4');
    const r = await decode(f);
    assert.deepEqual([r.decision, r.request.replied], ['continue', undefined]);
    assert.equal(counter('http.rbac4.rbac.shadow_denied'), 1);
    assert.deepEqual(r.request.metadata()['envoy.filters.http.rbac'], { shadow_engine_result: 'denied' });
    const none = await decode(rbacFactory('envoy.filters.http.rbac', {}, 'rbac5'));
    assert.deepEqual(none.request.metadata(), {}, 'no rules, no metadata');
  });

  it("takes a route's RBACPerRoute instead, and an empty one switches the filter off there", async () => {
    const f = rbacFactory('envoy.filters.http.rbac', { rules: { action: 'ALLOW', policies: {} } }, 'rbac6');
    assert.equal((await decode(f)).decision, 'stop', 'nothing is allowed by the filter');
    const open = routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.rbac': { '@type': PER_ROUTE } } }]);
    const off = await decode(f, { routeConfig: open });
    assert.deepEqual([off.decision, off.request.metadata()], ['continue', {}]);
    const own = routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.rbac': { '@type': PER_ROUTE, rbac: { rules: { action: 'DENY', policies: { p: byPath('/x') } }, rules_stat_prefix: 'route_' } } } }]);
    const routed = await decode(f, { path: '/x', routeConfig: own });
    assert.equal(routed.decision, 'stop');
    assert.deepEqual(routed.request.metadata()['envoy.filters.http.rbac'], { route_enforced_effective_policy_id: 'p', route_enforced_engine_result: 'denied' }, "the route's prefix names the metadata");
    assert.equal(counter('http.rbac6.rbac.denied'), 2, "the filter's counters count the route's verdicts");
  });

  it('matches principals: source addresses and headers, with and/or/not', async () => {
    const principals = [{ and_ids: { ids: [{ direct_remote_ip: { address_prefix: '10.0.0.0', prefix_len: 8 } }, { not_id: { header: { name: 'x-banned', present_match: true } } }] } }];
    const f = rbacFactory('envoy.filters.http.rbac', { rules: { action: 'ALLOW', policies: { inside: { permissions: [{ any: true }], principals } } } }, 'rbac7');
    assert.equal((await decode(f, { connection: { directRemoteIp: '10.1.2.3' } })).decision, 'continue');
    assert.equal((await decode(f, { connection: { directRemoteIp: '10.1.2.3' }, headers: { 'x-banned': '1' } })).decision, 'stop');
    assert.equal((await decode(f, { connection: { directRemoteIp: '192.168.0.1' } })).decision, 'stop');
  });
});
