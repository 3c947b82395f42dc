import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryHostPredicate } from '../../lookup.js';

/** envoy.retry_host_predicates.previous_hosts alone (Envoy's previous_hosts test): each request remembers its own tries. */

const entry = { name: 'envoy.retry_host_predicates.previous_hosts', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate' } };

describe('previous_hosts', () => {
  it('rejects a host this request tried, and only for this request', () => {
    const make = retryHostPredicate(entry)!;
    const [a, b] = [{ canary: false }, { canary: false }];
    const one = make();
    assert.equal(one.shouldSelectAnotherHost(a), false);
    one.onHostAttempted(a);
    assert.deepEqual([one.shouldSelectAnotherHost(a), one.shouldSelectAnotherHost(b)], [true, false]);
    assert.equal(make().shouldSelectAnotherHost(a), false, 'another request starts afresh');
  });
});
