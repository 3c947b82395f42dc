import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigError } from '../../../../config/config-error.js';
import { checkTcpProxy } from './config.js';

/** The TCP proxy's configuration checks, without a process tree (its traffic: test/serve-listeners.test.ts, test/connect.test.ts). */

function check(config: Record<string, unknown>, dynamic = false): ConfigError[] {
  const errors: ConfigError[] = [];
  checkTcpProxy(config, 'f', { clusters: new Set(['a', 'b']), dynamic }, errors);
  return errors;
}

describe('the TCP proxy descriptor', () => {
  it('takes a known cluster or known weighted clusters', () => {
    assert.deepEqual(check({ stat_prefix: 't', cluster: 'a' }), []);
    assert.deepEqual(check({ stat_prefix: 't', weighted_clusters: { clusters: [{ name: 'a', weight: 1 }, { name: 'b', weight: 2 }] } }), []);
  });

  it('names an unknown cluster, unless the listener came from LDS', () => {
    assert.deepEqual(check({ cluster: 'c' }).map((e) => [e.code, e.path]), [['unknown_reference', 'f.cluster']]);
    assert.deepEqual(check({ weighted_clusters: { clusters: [{ name: 'a' }, { name: 'z' }] } }).map((e) => [e.code, e.path]), [['unknown_reference', 'f.weighted_clusters.clusters[1].name']]);
    assert.deepEqual(check({ cluster: 'c' }, true), []);
  });

  it('needs a cluster', () => {
    assert.deepEqual(check({ stat_prefix: 't' }).map((e) => [e.code, e.path]), [['missing', 'f']]);
  });

  it("checks a tunnel's POST path as Envoy does, and refuses retried tunnels", () => {
    const tunnel = (t: object, extra: object = {}) => check({ cluster: 'a', tunneling_config: { hostname: 'h:443', ...t }, ...extra }).map((e) => [e.code, e.path]);
    assert.deepEqual(tunnel({ post_path: '/up' }), [['conflict', 'f.tunneling_config.post_path']]);
    assert.deepEqual(tunnel({ use_post: true, post_path: 'up' }), [['invalid', 'f.tunneling_config.post_path']]);
    assert.deepEqual(tunnel({ use_post: true, post_path: '/up' }), []);
    assert.deepEqual(tunnel({}, { max_connect_attempts: 2 }), [['unsupported', 'f.max_connect_attempts']]);
  });
});
