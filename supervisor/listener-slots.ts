import type { JsonObject } from '../shared/config/proto-json.js';
import { filterChainsOf, type ListenerResource } from '../shared/config/resources.js';
import { listenerRegionSlot } from '../shared/upstream/breaker-counts.js';
import { withoutChains } from './listener-drains.js';
import { canonicalText } from '../shared/config/resource-hash.js';
import type { BucketRegion } from './ratelimit/bucket-region.js';

/**
 * The slots the tree's listeners hold in the shared regions: each listener name's
 * connection-count slot in the breaker region (for the tree's life; see LISTENER_CAPACITY), and
 * the token-bucket slots of each listener version's local rate limits, given back once no
 * version (serving, stopped or warming) holds them.
 */
export class ListenerSlots {
  /** The token-bucket slots the listeners hold (see bucketSlotsFor). */
  private readonly owned = new Set<number>();
  private readonly connectionSlots = new Map<string, number>();

  constructor(private readonly buckets: Pick<BucketRegion, 'allocate' | 'release'>) {}

  /** The breaker region's slots that count listeners' connections. */
  connectionCountSlots(): Iterable<number> {
    return this.connectionSlots.values();
  }

  /** Listener `name`'s connection-count slot, given the first time the name is seen. */
  connectionSlotFor(name: string): number {
    let slot = this.connectionSlots.get(name);
    if (slot === undefined) {
      slot = listenerRegionSlot(this.connectionSlots.size);
      this.connectionSlots.set(name, slot);
    }
    return slot;
  }

  /**
   * The token-bucket slots of a listener version's local rate limits, by filter chain. A chain
   * that an in-place update leaves as it was keeps its buckets, as Envoy keeps the chain (found
   * by its configuration wherever it stands, as the workers find it: worker/listeners.ts); any
   * other chain starts with full buckets of its own.
   */
  bucketSlotsFor(config: JsonObject, name: string, current: ListenerResource | undefined, socketId: number): ListenerResource['bucketSlots'] {
    const inPlace = current !== undefined && !current.stopped && current.socketId === socketId && withoutChains(current.config) === withoutChains(config);
    const reusable = new Map(inPlace ? filterChainsOf(current.config).map(([key, chain]) => [canonicalText(chain), current.bucketSlots[key] ?? []]) : []);
    const out: ListenerResource['bucketSlots'] = {};
    const fresh: number[] = [];
    try {
      for (const [key, chain] of filterChainsOf(config)) {
        const json = canonicalText(chain);
        let slots = reusable.get(json);
        if (slots) reusable.delete(json);
        else fresh.push(...(slots = this.buckets.allocate(chain, `listener '${name}'`)));
        if (slots.length) out[key] = slots;
      }
    } catch (err) {
      this.buckets.release(fresh);
      throw err;
    }
    for (const slot of fresh) this.owned.add(slot);
    return out;
  }

  /** Gives back the token-bucket slots none of `versions` holds any more. */
  releaseUnused(versions: Iterable<ListenerResource>): void {
    const held = new Set<number>();
    for (const l of versions) for (const slots of Object.values(l.bucketSlots)) for (const s of slots) held.add(s);
    const unused = [...this.owned].filter((s) => !held.has(s));
    for (const s of unused) this.owned.delete(s);
    this.buckets.release(unused);
  }
}
