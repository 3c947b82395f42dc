// previous_priorities steering a retry (worker/upstream/priority-set.ts with the retry state's
// exclusions): the load is recomputed without the priorities tried, and when none is left the
// tries start over on the original load, as Envoy's PreviousPrioritiesRetryPriority does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PrioritySet, type LevelHost } from '../worker/upstream/priority-set.js';
import type { UpstreamHost } from '../shared/upstream/hosts.js';

function host(address: string, priority: number): LevelHost {
  const info = {
    address, ip: '127.0.0.1', port: 1, hostname: address, displayHostname: address, weight: 1, region: '', zone: '', subZone: '', canary: false,
    priority, localityWeight: 0, overprovisioningFactor: 140, healthCheckIp: '127.0.0.1', healthCheckPort: 1, edsHealthStatus: 'HEALTHY', healthFlags: 0, transportSocketMatch: -1,
  } satisfies UpstreamHost;
  return { info };
}

describe('a retry steered by previous_priorities', () => {
  it('goes to a priority not tried yet, and starts over when every one was', () => {
    const set = new PrioritySet<LevelHost>(50, false);
    const p0 = host('p0', 0);
    const p1 = host('p1', 1);
    set.update([p0, p1]);
    let excluded: Set<number> | undefined = new Set([0]);
    let exhausted = 0;
    const steering = { excludedPriorities: () => excluded, priorityExclusionExhausted: () => { exhausted++; excluded = undefined; } };
    // All healthy: priority 0 takes every request, unless it was tried.
    for (let i = 0; i < 20; i++) assert.deepEqual(set.choose(undefined).hosts, [p0]);
    for (let i = 0; i < 20; i++) assert.deepEqual(set.choose(undefined, steering).hosts, [p1]);
    excluded = new Set([0, 1]);
    assert.deepEqual(set.choose(undefined, steering).hosts, [p0]);
    assert.equal(exhausted, 1);
  });
});
