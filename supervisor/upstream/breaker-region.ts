import { randomBytes } from 'node:crypto';
import { openSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { native } from '../../shared/native/index.js';
import { BreakerCounts, CLUSTER_CAPACITY, regionBytes } from '../../shared/upstream/breaker-counts.js';
import { sharedMemoryDir } from '../hot-restart/shared-memory.js';

/**
 * The circuit-breaker region: created and sized in /dev/shm, kept open as a descriptor the workers
 * inherit, and unlinked at once, so nothing is left behind however the tree ends.
 */
export function createBreakerRegion(workers: number): { counts: BreakerCounts; fd: number } {
  const path = join(sharedMemoryDir(), `proxy_breakers_${process.pid}_${randomBytes(4).toString('hex')}`);
  const layout = { capacity: CLUSTER_CAPACITY, workers };
  const counts = new BreakerCounts(native.mapShared(path, regionBytes(layout), true), layout);
  const fd = openSync(path, 'r+');
  unlinkSync(path);
  return { counts, fd };
}

