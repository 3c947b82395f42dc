import type { LbPolicy } from '../../shared/upstream/lb-policy.js';
import { stats } from '../../shared/stats/process.js';
import type { Gauge } from '../../shared/stats/store.js';
import { xxHash64 } from '../../shared/hashing.js';
import type { Balanced } from './load-balancer.js';

/**
 * Envoy's consistent-hash load balancers, built as Envoy builds them from the same hosts in the
 * same order, so that every worker (and Envoy) maps a request's hash to the same host:
 * - RING_HASH: each host's address hashed `<address>_<n>` onto a ring as many times as its
 *   weight's share of `minimum_ring_size` (1024) asks; a hash goes to the first entry at or after it.
 * - MAGLEV: a lookup table of `table_size` (65537, prime) entries filled by each host's
 *   permutation (offset and skip from its address), weighted; a hash goes to entry hash % size.
 * A request without a hash (no hash_policy matched) gets a random one, as in Envoy.
 */

export interface HashedHost extends Balanced {
  address: string;
}

export interface HashBalancer<H extends HashedHost> {
  pick(hosts: readonly H[], hash: bigint | undefined): H | undefined;
}

function randomHash(): bigint {
  return (BigInt(Math.floor(Math.random() * 2 ** 32)) << 32n) | BigInt(Math.floor(Math.random() * 2 ** 32));
}

/** The structure is rebuilt only when the host list it was built from changes. */
abstract class Cached<H extends HashedHost, T> implements HashBalancer<H> {
  private builtFrom: readonly H[] | undefined;
  private built: T | undefined;

  pick(hosts: readonly H[], hash: bigint | undefined): H | undefined {
    if (hosts.length === 0) return undefined;
    // Built for one host too: its size figures are Envoy's whatever the host count.
    if (this.builtFrom !== hosts) {
      this.built = this.build(hosts);
      this.builtFrom = hosts;
    }
    if (hosts.length === 1) return hosts[0];
    return this.lookup(this.built!, hash ?? randomHash());
  }

  protected abstract build(hosts: readonly H[]): T;
  protected abstract lookup(built: T, hash: bigint): H | undefined;
}

/** Fewest and most entries any one host has. */
function perHostRange<H>(entries: readonly H[]): { min: number; max: number } {
  const counts = new Map<H, number>();
  for (const h of entries) counts.set(h, (counts.get(h) ?? 0) + 1);
  const values = [...counts.values()];
  return { min: Math.min(...values), max: Math.max(...values) };
}

/** A worker's copy of a figure every worker computes alike: the tree reports one value, not their sum. */
const sameInEveryWorker = (name: string) => stats.gauge(name, 'local');

export class RingHash<H extends HashedHost> extends Cached<H, { hashes: BigUint64Array; hosts: H[] }> {
  /** `cluster.<name>.ring_hash_lb.size`, `min_hashes_per_host`, `max_hashes_per_host`, with a stat prefix. */
  private readonly gauges: { size: Gauge; min: Gauge; max: Gauge } | undefined;

  constructor(
    private readonly minRingSize = 1024,
    private readonly maxRingSize = 8 * 1024 * 1024,
    statPrefix?: string,
  ) {
    super();
    if (statPrefix !== undefined) {
      const p = `${statPrefix}ring_hash_lb.`;
      this.gauges = { size: sameInEveryWorker(`${p}size`), min: sameInEveryWorker(`${p}min_hashes_per_host`), max: sameInEveryWorker(`${p}max_hashes_per_host`) };
    }
  }

  protected build(hosts: readonly H[]): { hashes: BigUint64Array; hosts: H[] } {
    const total = hosts.reduce((s, h) => s + h.weight, 0);
    const normalized = hosts.map((h) => h.weight / total);
    const minWeight = Math.min(...normalized);
    const scale = Math.min(Math.ceil(minWeight * this.minRingSize) / minWeight, this.maxRingSize);
    const entries: { hash: bigint; host: H }[] = [];
    let current = 0;
    let target = 0;
    hosts.forEach((host, i) => {
      target += scale * normalized[i]!;
      for (let n = 0; current < target; n++, current++) entries.push({ hash: xxHash64(`${host.address}_${n}`), host });
    });
    entries.sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
    const ring = { hashes: BigUint64Array.from(entries.map((e) => e.hash)), hosts: entries.map((e) => e.host) };
    if (this.gauges) {
      const { min, max } = perHostRange(ring.hosts);
      this.gauges.size.set(ring.hosts.length);
      this.gauges.min.set(min);
      this.gauges.max.set(max);
    }
    return ring;
  }

  protected lookup(ring: { hashes: BigUint64Array; hosts: H[] }, hash: bigint): H | undefined {
    // The first entry whose hash is at or after the request's, wrapping round.
    let lo = 0;
    let hi = ring.hashes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ring.hashes[mid]! < hash) lo = mid + 1;
      else hi = mid;
    }
    return ring.hosts[lo === ring.hashes.length ? 0 : lo];
  }
}

export class Maglev<H extends HashedHost> extends Cached<H, H[]> {
  /** `cluster.<name>.maglev_lb.min_entries_per_host`, `max_entries_per_host`, with a stat prefix. */
  private readonly gauges: { min: Gauge; max: Gauge } | undefined;

  constructor(
    private readonly tableSize = 65537,
    statPrefix?: string,
  ) {
    super();
    if (statPrefix !== undefined) this.gauges = { min: sameInEveryWorker(`${statPrefix}maglev_lb.min_entries_per_host`), max: sameInEveryWorker(`${statPrefix}maglev_lb.max_entries_per_host`) };
  }

  protected build(hosts: readonly H[]): H[] {
    const size = BigInt(this.tableSize);
    const maxWeight = Math.max(...hosts.map((h) => h.weight));
    const entries = hosts.map((host) => ({
      host,
      offset: Number(xxHash64(host.address) % size),
      skip: Number(xxHash64(host.address, 1n) % (size - 1n)) + 1,
      weight: host.weight / maxWeight,
      next: 0,
      count: 0,
    }));
    const table: (H | undefined)[] = new Array(this.tableSize).fill(undefined);
    let filled = 0;
    for (let iteration = 1; filled < this.tableSize; iteration++) {
      for (const e of entries) {
        if (iteration * e.weight < e.count) continue;
        let c = (e.offset + e.skip * e.next) % this.tableSize;
        while (table[c] !== undefined) {
          e.next++;
          c = (e.offset + e.skip * e.next) % this.tableSize;
        }
        table[c] = e.host;
        e.next++;
        e.count++;
        if (++filled === this.tableSize) break;
      }
    }
    if (this.gauges) {
      const { min, max } = perHostRange(table);
      this.gauges.min.set(min);
      this.gauges.max.set(max);
    }
    return table as H[];
  }

  protected lookup(table: H[], hash: bigint): H | undefined {
    return table[Number(hash % BigInt(this.tableSize))];
  }
}

/** The consistent-hash balancer a cluster's lb_policy asks for, if any. */
export function hashBalancerFor<H extends HashedHost>(policy: LbPolicy, clusterName?: string): HashBalancer<H> | undefined {
  const statPrefix = clusterName !== undefined ? `cluster.${clusterName}.` : undefined;
  if (policy.kind === 'RING_HASH') return new RingHash<H>(policy.minimumRingSize, policy.maximumRingSize, statPrefix);
  if (policy.kind === 'MAGLEV') return new Maglev<H>(policy.tableSize, statPrefix);
  return undefined;
}
