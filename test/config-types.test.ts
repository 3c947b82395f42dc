import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { Bootstrap, Cluster } from '../shared/config/envoy-types.js';
import { generate, generatedFile } from '../scripts/generate-config-types.js';
import { loadBootstrap } from '../shared/config/bootstrap.js';
import { bootstrapSource, loadErrors } from './helpers/bootstraps.js';

/**
 * The configuration's TypeScript types are generated from the vendored API (the protos the
 * loader reads), in the shape the loader produces; the committed file must be what they generate.
 */

describe('the generated configuration types', () => {
  it('shared/config/envoy-types.ts is what the vendored API generates (`npm run generate` after a change)', () => {
    assert.equal(readFileSync(generatedFile, 'utf8'), generate());
  });

  it("describe what the loader produces: durations as strings, wrappers as their value, 64-bit integers as numbers where safe, an Any with its @type", () => {
    const cluster = {
      name: 'c',
      connect_timeout: '0.25s',
      per_connection_buffer_limit_bytes: 32768,
      lb_policy: 'RING_HASH',
      ring_hash_lb_config: { minimum_ring_size: '2048' },
      circuit_breakers: { thresholds: [{ priority: 'HIGH', max_requests: 10, retry_budget: { budget_percent: { value: 25 } } }] },
      load_assignment: { cluster_name: 'c', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 80 } } } }] }] },
      typed_extension_protocol_options: {
        'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http2_protocol_options: {} } },
      },
    };
    const source = { admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } }, stats_flush_interval: '5s', static_resources: { clusters: [cluster] } };
    assert.deepEqual(loadErrors(source), []);
    const loaded: Bootstrap = loadBootstrap(bootstrapSource({ configYaml: JSON.stringify(source) })).bootstrap;
    const c: Cluster = loaded.static_resources!.clusters![0]!;
    // Each read below is typed by the generated interfaces; the values are the loader's.
    const timeout: string | undefined = c.connect_timeout;
    const limit: number | undefined = c.per_connection_buffer_limit_bytes;
    const threshold = c.circuit_breakers?.thresholds?.[0];
    const priority: 'DEFAULT' | 'HIGH' | undefined = threshold?.priority;
    const percent: number | undefined = threshold?.retry_budget?.budget_percent?.value;
    const options = c.typed_extension_protocol_options?.['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'];
    const flush: string | undefined = loaded.stats_flush_interval;
    const ring: number | string | undefined = c.ring_hash_lb_config?.minimum_ring_size;
    assert.deepEqual(
      [timeout, limit, threshold?.max_requests, priority, percent, options?.['@type'], flush, ring],
      ['0.250s', 32768, 10, 'HIGH', 25, 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', '5s', 2048],
    );
  });
});
