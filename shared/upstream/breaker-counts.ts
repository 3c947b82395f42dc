import type { Cluster, envoy } from '../config/envoy-types.js';
import { native } from '../native/index.js';

/**
 * Circuit-breaker counts for the whole tree, in memory every worker maps (the addon's
 * mapShared): for each cluster, priority (DEFAULT, HIGH) and resource, one 32-bit slot per
 * worker. A worker writes only its own slots and reads every worker's to admit a request, so the
 * limits hold across the tree as Envoy holds them across its worker threads (two workers
 * admitting at the same instant may each pass the last free unit: at most one per worker over
 * the limit, briefly). The supervisor creates the region, unlinks it at once (workers inherit a
 * descriptor), and zeroes a dead worker's slots before its replacement starts.
 *
 * The region has room for CLUSTER_CAPACITY clusters (a sparse file: only the pages of clusters
 * in use take memory). The supervisor's cluster manager gives each cluster name a slot for the
 * tree's life, so a cluster that comes back (CDS) finds its counts where in-flight requests of
 * its earlier version still release theirs.
 */

export const RESOURCES = ['cx', 'pending', 'rq', 'retry'] as const;
export type BreakerResource = (typeof RESOURCES)[number];
export type BreakerPriority = 0 | 1; // DEFAULT, HIGH

/** Slots in the region: cluster names from the bottom, listener names (LISTENER_CAPACITY of them) from the top. */
export const CLUSTER_CAPACITY = 16384;

/**
 * How many distinct listener names a tree can have over its life: each counts its open
 * connections, for the runtime's `envoy.resource_limits.listener.<name>.connection_limit`, in
 * the DEFAULT priority's `cx` slots of one region slot, taken from the top down.
 */
export const LISTENER_CAPACITY = 1024;

/** The region slot of the `index`-th listener name (see LISTENER_CAPACITY). */
export function listenerRegionSlot(index: number): number {
  if (index >= LISTENER_CAPACITY) throw new Error(`more than ${LISTENER_CAPACITY} listener names over the tree's life: no connection-count slot left`);
  return CLUSTER_CAPACITY - 1 - index;
}

/** The name a listener's connection count goes by in the region (no cluster can be named so: it starts with a NUL). */
export function listenerCountKey(listener: string): string {
  return `\u0000listener:${listener}`;
}

export interface BreakerLayout {
  /** Cluster slots in the region. */
  capacity: number;
  workers: number;
}

export function regionBytes(layout: BreakerLayout): number {
  return Math.max(4, layout.capacity * 2 * RESOURCES.length * layout.workers * 4);
}

export class BreakerCounts {
  private readonly slots: Int32Array;
  private readonly clusterIndex: Map<string, number>;

  constructor(
    buffer: ArrayBuffer,
    readonly layout: BreakerLayout,
  ) {
    this.slots = new Int32Array(buffer, 0, regionBytes(layout) / 4);
    this.clusterIndex = new Map();
  }

  /** Cluster `name` counts in slot `slot` (given by the supervisor's cluster manager). */
  assign(name: string, slot: number): void {
    if (slot < 0 || slot >= this.layout.capacity) throw new Error(`circuit-breaker slot ${slot} for cluster '${name}' is outside the region (${this.layout.capacity} slots)`);
    this.clusterIndex.set(name, slot);
  }

  /** Opens the region a worker inherited (`/proc/self/fd/<fd>`). */
  static open(fd: number, layout: BreakerLayout): BreakerCounts {
    return new BreakerCounts(native.mapShared(`/proc/self/fd/${fd}`, regionBytes(layout), false), layout);
  }

  /** The first slot of (cluster, priority, resource): the worker slots follow it. */
  base(cluster: string, priority: BreakerPriority, resource: BreakerResource): number {
    const c = this.clusterIndex.get(cluster);
    if (c === undefined) throw new Error(`no circuit-breaker slots for cluster '${cluster}'`);
    return ((c * 2 + priority) * RESOURCES.length + RESOURCES.indexOf(resource)) * this.layout.workers;
  }

  add(base: number, worker: number, delta: number): void {
    this.slots[base + worker]! += delta;
  }

  total(base: number): number {
    let sum = 0;
    for (let w = 0; w < this.layout.workers; w++) sum += this.slots[base + w]!;
    return sum;
  }

  /**
   * A worker is gone: whatever it held is released, in the slots of every cluster assigned here
   * and in `otherSlots` (the listeners' connection counts, which the listener manager assigns).
   * Only slots in use are written: the region is sparse, and writing all of its 131,072 slots per
   * worker would make every page of it resident (512 KB a worker) for the tree's life.
   */
  clearWorker(worker: number, otherSlots: Iterable<number> = []): void {
    const clear = (slot: number) => {
      for (let row = slot * 2 * RESOURCES.length; row < (slot + 1) * 2 * RESOURCES.length; row++) this.slots[row * this.layout.workers + worker] = 0;
    };
    for (const slot of this.clusterIndex.values()) clear(slot);
    for (const slot of otherSlots) clear(slot);
  }
}

/** A cluster's circuit_breakers thresholds at a priority, with Envoy's defaults (1024, 1024, 1024, 3). */
export const DEFAULT_THRESHOLDS = { max_connections: 1024, max_pending_requests: 1024, max_requests: 1024, max_retries: 3 };

/** The cluster's `circuit_breakers.thresholds` entry for a priority, if it has one. */
export function thresholdsEntry(cluster: Cluster, priority: BreakerPriority): envoy.config.cluster.v3.CircuitBreakers.Thresholds | undefined {
  const name = priority === 1 ? 'HIGH' : 'DEFAULT';
  return cluster.circuit_breakers?.thresholds?.find((x) => (x.priority ?? 'DEFAULT') === name);
}

export function thresholdsOf(cluster: Cluster, priority: BreakerPriority): typeof DEFAULT_THRESHOLDS {
  const t = thresholdsEntry(cluster, priority);
  return {
    max_connections: t?.max_connections ?? DEFAULT_THRESHOLDS.max_connections,
    max_pending_requests: t?.max_pending_requests ?? DEFAULT_THRESHOLDS.max_pending_requests,
    max_requests: t?.max_requests ?? DEFAULT_THRESHOLDS.max_requests,
    max_retries: t?.max_retries ?? DEFAULT_THRESHOLDS.max_retries,
  };
}


/** CircuitBreakers.Thresholds.retry_budget: while set, concurrent retries are bounded by a share of the cluster's requests rather than max_retries. */
export interface RetryBudget {
  /** budget_percent, 20 when unset. */
  percent: number;
  /** min_retry_concurrency, 3 when unset. */
  minConcurrency: number;
}

export function retryBudgetOf(cluster: Cluster, priority: BreakerPriority): RetryBudget | undefined {
  const b = thresholdsEntry(cluster, priority)?.retry_budget;
  if (b === undefined) return undefined;
  // A budget_percent given is its value (an empty Percent is 0), as Envoy reads it.
  const percent = b.budget_percent === undefined ? 20 : (b.budget_percent.value ?? 0);
  return { percent, minConcurrency: b.min_retry_concurrency ?? 3 };
}

/** Envoy's RetryBudgetImpl::max: the budget's share of active and pending requests (a whole number), never under its minimum. */
export function retryBudgetLimit(budget: RetryBudget, activeRequests: number, pendingRequests: number): number {
  return Math.max(Math.floor((budget.percent / 100) * (activeRequests + pendingRequests)), budget.minConcurrency);
}
