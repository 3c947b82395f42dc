import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigError } from '../../../../config/config-error.js';
import { checkUdpProxy, udpProxyCluster, UDP_ROUTE } from './config.js';

/** The UDP proxy's route and its checks, without a process tree (its datagrams: test/udp-proxy.test.ts). */

const matcher = (cluster: string) => ({ on_no_match: { action: { name: 'route', typed_config: { '@type': `type.googleapis.com/${UDP_ROUTE}`, cluster } } } });

function check(config: Record<string, unknown>, dynamic = false): [string, string][] {
  const errors: ConfigError[] = [];
  checkUdpProxy(config, 'f', { clusters: new Set(['dns']), dynamic }, errors);
  return errors.map((e) => [e.code, e.path]);
}

describe('the UDP proxy descriptor', () => {
  it("routes a session to `cluster`, or to its matcher's on_no_match route", () => {
    assert.equal(udpProxyCluster({ cluster: 'dns' }), 'dns');
    assert.equal(udpProxyCluster({ matcher: matcher('dns') }), 'dns');
    assert.equal(udpProxyCluster({ matcher: { on_no_match: { action: { typed_config: { '@type': 'type.googleapis.com/other.Type', cluster: 'dns' } } } } }), undefined);
    assert.equal(udpProxyCluster({}), undefined);
  });

  it('needs one route to a known cluster (any cluster from LDS)', () => {
    assert.deepEqual(check({ stat_prefix: 'u', cluster: 'dns' }), []);
    assert.deepEqual(check({ stat_prefix: 'u', matcher: matcher('dns') }), []);
    assert.deepEqual(check({ cluster: 'none' }), [['unknown_reference', 'f']]);
    assert.deepEqual(check({ cluster: 'none' }, true), []);
    assert.deepEqual(check({ stat_prefix: 'u' }), [['missing', 'f']]);
    assert.deepEqual(check({ cluster: 'dns', matcher: matcher('dns') }), [['conflict', 'f']]);
  });
});
