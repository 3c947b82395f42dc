import { closeSync } from 'node:fs';
import { slotsNeeded } from '../../shared/ratelimit/bucket-slots.js';
import { BUCKET_CAPACITY, TreeBuckets } from '../../shared/ratelimit/token-buckets.js';
import { createTreeRegion } from '../shared-region.js';

/**
 * The tree's token buckets (shared/ratelimit/token-buckets.ts): the region (../shared-region.ts)
 * and its slots, given to the resources that carry local rate limits and taken back when a
 * resource is replaced or removed.
 *
 * A slot taken back is reused only once no slot is left that was never used, oldest first: the
 * connections of a version that drains may still take tokens from it for the drain time, and
 * they should not take them from a newer bucket.
 */
export class BucketRegion {
  readonly buckets: TreeBuckets;
  readonly fd: number;
  private nextFresh = 0;
  private readonly returned: number[] = [];

  constructor() {
    const region = createTreeRegion('buckets', TreeBuckets.bytes);
    this.buckets = new TreeBuckets(region.buffer);
    this.fd = region.fd;
  }

  /** Slots for the local rate limits under `root`, each a full bucket; throws, naming `what`, when the region is full. */
  allocate(root: unknown, what: string): number[] {
    const n = slotsNeeded(root);
    if (n === 0) return [];
    if (BUCKET_CAPACITY - this.nextFresh + this.returned.length < n) throw new Error(`${what}: no room for ${n} more local rate limit token bucket(s) (the tree holds ${BUCKET_CAPACITY})`);
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const slot = this.nextFresh < BUCKET_CAPACITY ? this.nextFresh++ : this.returned.shift()!;
      this.buckets.reset(slot);
      out.push(slot);
    }
    return out;
  }

  release(slots: readonly number[]): void {
    this.returned.push(...slots);
  }

  close(): void {
    closeSync(this.fd);
  }
}
