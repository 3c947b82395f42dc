import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryPriority } from '../../lookup.js';

/** envoy.retry_priorities.previous_priorities alone (Envoy's previous_priorities test): tried priorities excluded every update_frequency tries. */

const entry = (updateFrequency: number) => ({ name: 'envoy.retry_priorities.previous_priorities', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.retry.priority.previous_priorities.v3.PreviousPrioritiesConfig', update_frequency: updateFrequency } });

describe('previous_priorities', () => {
  it('excludes the priorities tried once update_frequency tries have gone, and starts over when all are out', () => {
    const priority = retryPriority(entry(2))!();
    priority.onHostAttempted(0);
    assert.equal(priority.excludedPriorities(), undefined, 'one try: not yet');
    priority.onHostAttempted(0);
    assert.deepEqual([...priority.excludedPriorities()!], [0]);
    priority.onHostAttempted(1);
    priority.onHostAttempted(1);
    assert.deepEqual([...priority.excludedPriorities()!].sort(), [0, 1]);
    priority.exhausted();
    assert.equal(priority.excludedPriorities(), undefined);
  });
});
