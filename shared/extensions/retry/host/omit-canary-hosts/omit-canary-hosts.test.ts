import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryHostPredicate } from '../../lookup.js';

/** envoy.retry_host_predicates.omit_canary_hosts alone: canaries are picked again, whatever was tried. */

const entry = { name: 'envoy.retry_host_predicates.omit_canary_hosts', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.retry.host.omit_canary_hosts.v3.OmitCanaryHostsPredicate' } };

describe('omit_canary_hosts', () => {
  it('rejects canary hosts and no others', () => {
    const predicate = retryHostPredicate(entry)!();
    const plain = { canary: false };
    predicate.onHostAttempted(plain);
    assert.deepEqual([predicate.shouldSelectAnotherHost({ canary: true }), predicate.shouldSelectAnotherHost(plain)], [true, false]);
  });
});
