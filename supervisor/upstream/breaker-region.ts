import { BreakerCounts, CLUSTER_CAPACITY, regionBytes } from '../../shared/upstream/breaker-counts.js';
import { createTreeRegion } from '../shared-region.js';

/** The circuit-breaker region (see ../shared-region.ts), with room for CLUSTER_CAPACITY clusters. */
export function createBreakerRegion(workers: number): { counts: BreakerCounts; fd: number } {
  const layout = { capacity: CLUSTER_CAPACITY, workers };
  const region = createTreeRegion('breakers', regionBytes(layout));
  return { counts: new BreakerCounts(region.buffer, layout), fd: region.fd };
}
