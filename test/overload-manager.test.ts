import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadErrors, minimalBootstrap, routesListener } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor } from './helpers/proxy.js';

/**
 * The overload manager, as Envoy's overload_integration_test drives it: a fixed_heap monitor
 * whose limit the heap is already past saturates stop_accepting_requests (503 "envoy overloaded",
 * downstream_rq_overload_close) and shrink_heap (shrink_count); one whose limit is far away does
 * nothing. The pressure gauge is the largest of the workers'.
 */

const FIXED_HEAP = 'type.googleapis.com/envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig';
const heap = (bytes: number) => [{ name: 'envoy.resource_monitors.fixed_heap', typed_config: { '@type': FIXED_HEAP, max_heap_size_bytes: String(bytes) } }];
const threshold = (value: number) => [{ name: 'envoy.resource_monitors.fixed_heap', threshold: { value } }];

function bootstrap(maxHeap: number): object {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    overload_manager: {
      refresh_interval: '0.1s',
      resource_monitors: heap(maxHeap),
      actions: [
        { name: 'envoy.overload_actions.shrink_heap', triggers: threshold(0.95) },
        { name: 'envoy.overload_actions.stop_accepting_requests', triggers: threshold(0.98) },
      ],
    },
    static_resources: { listeners: [routesListener('edge', [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }])] },
  };
}

after(() => stopAllProxies());

describe('the overload manager', () => {
  it('with the heap past its limit: requests are refused 503 "envoy overloaded", and the heap is shrunk', async () => {
    const proxy = await startProxy(bootstrap(1024 * 1024), ['--concurrency', '2']);
    const url = `http://127.0.0.1:${proxy.ports.get('edge')}/`;
    const r = await waitFor('stop_accepting_requests', async () => {
      const got = await httpRequest(url);
      return got.status === 503 ? got : undefined;
    });
    assert.equal(r.body, 'envoy overloaded');
    assert.ok((await statValue(proxy, 'http.edge.downstream_rq_overload_close')) >= 1);
    // As Envoy's gauge, the share of the limit in use, in percent: past the limit it is past 100.
    assert.ok((await statValue(proxy, 'overload.envoy.resource_monitors.fixed_heap.pressure')) > 100);
    assert.equal(await statValue(proxy, 'overload.envoy.overload_actions.stop_accepting_requests.active'), 1);
    await waitFor('a shrink', async () => ((await statValue(proxy, 'overload.envoy.overload_actions.shrink_heap.shrink_count')) >= 1 ? true : undefined), 25_000);
    await proxy.stop();
  });

  it('with room to spare: requests are served, the actions inactive, the pressure a share of the limit', async () => {
    const proxy = await startProxy(bootstrap(64 * 1024 * 1024 * 1024), ['--concurrency', '1']);
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('edge')}/`)).status, 200);
    assert.equal(await statValue(proxy, 'overload.envoy.overload_actions.stop_accepting_requests.active'), 0);
    assert.ok((await statValue(proxy, 'overload.envoy.resource_monitors.fixed_heap.pressure')) < 5);
    await proxy.stop();
  });

  it("refuses, in Envoy's words, a trigger naming no monitor and a scaled trigger out of order; and the actions it does not take, by name", () => {
    const doc = minimalBootstrap() as Record<string, unknown>;
    doc.overload_manager = {
      resource_monitors: heap(1 << 30),
      actions: [
        { name: 'envoy.overload_actions.stop_accepting_requests', triggers: [{ name: 'envoy.resource_monitors.nothing', threshold: { value: 0.9 } }] },
        { name: 'envoy.overload_actions.disable_http_keepalive', triggers: [{ name: 'envoy.resource_monitors.fixed_heap', scaled: { scaling_threshold: 0.9, saturation_threshold: 0.8 } }] },
        { name: 'envoy.overload_actions.reduce_timeouts', triggers: threshold(0.9) },
        { name: 'envoy.overload_actions.reset_high_memory_stream', triggers: threshold(0.9) },
        { name: 'envoy.overload_actions.stop_accepting_connections', triggers: threshold(0.9), typed_config: { '@type': 'type.googleapis.com/envoy.config.overload.v3.ScaleTimersOverloadActionConfig', timer_scale_factors: [{ timer: 'HTTP_DOWNSTREAM_STREAM_IDLE', min_scale: { value: 10 } }] } },
        { name: 'envoy.overload_actions.no_such_action', triggers: threshold(0.9) },
      ],
    };
    assert.deepEqual(loadErrors(doc).map((e) => [e.code, e.detail.split(':')[0]]), [
      ['unknown_reference', 'Unknown trigger resource envoy.resource_monitors.nothing for overload action envoy.overload_actions.stop_accepting_requests'],
      ['invalid', 'scaling_threshold must be less than saturation_threshold'],
      ['missing', 'envoy.overload_actions.reduce_timeouts needs a envoy.config.overload.v3.ScaleTimersOverloadActionConfig'],
      ['missing', 'Overload action "envoy.overload_actions.reset_high_memory_stream" requires buffer_factory_config.'],
      ['invalid', 'Overload action "envoy.overload_actions.stop_accepting_connections" has an unexpected value for the typed_config field'],
      ['unsupported', 'Unknown Overload Manager Action envoy.overload_actions.no_such_action (this proxy takes envoy.overload_actions.stop_accepting_requests, envoy.overload_actions.disable_http_keepalive, envoy.overload_actions.shrink_heap, envoy.overload_actions.stop_accepting_connections, envoy.overload_actions.reject_incoming_connections, envoy.overload_actions.reduce_timeouts, envoy.overload_actions.reset_high_memory_stream)'],
    ]);
  });
});
