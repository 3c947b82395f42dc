import type { FromWorker, ToAdmin, ToWorker } from '../shared/ipc.js';
import { stats } from '../shared/stats/process.js';
import type { StatsDelta } from '../shared/stats/store.js';
import type { ManagedChild } from './children.js';

/**
 * The supervisor's part in stats collection: IPC runs only between parent and child, so the
 * admin process's `stats_collect` comes here, goes to every worker, and the workers' deltas go
 * back to the admin process in one message with the supervisor's own. A worker that does not
 * answer within the deadline is left out of that answer; its late delta is forwarded on its
 * own, never dropped (a delta, once taken, exists nowhere else).
 */

const DEADLINE_MS = 1000;
/** The extra source's place among the workers awaited. */
const EXTRA = -1;

interface Collection {
  id: number;
  sources: [string, StatsDelta][];
  waiting: Set<number>;
  timer: NodeJS.Timeout;
}

/** Where a source outside the tree comes from: a hot-restart parent's figures (see hot-restart/epoch.ts). */
export type ExtraSource = () => Promise<[source: string, delta: StatsDelta] | undefined>;

export class StatsRelay {
  private readonly open = new Map<number, Collection>();
  /** Asked at every collection, alongside the workers; a late or failed answer is left out. */
  extraSource: ExtraSource | undefined;

  constructor(
    private readonly workers: () => ManagedChild<FromWorker>[],
    private readonly toAdmin: (message: ToAdmin) => void,
    /** Refreshes the supervisor's own gauges before its delta is taken. */
    private readonly beforeCollect: () => void,
  ) {}

  collect(id: number, allGauges = false): void {
    this.beforeCollect();
    if (allGauges) stats.touchAllGauges();
    const collection: Collection = { id, sources: [['main', stats.takeDelta()]], waiting: new Set(), timer: setTimeout(() => this.close(id), DEADLINE_MS) };
    this.open.set(id, collection);
    this.workers().forEach((w, index) => {
      if (w.send<ToWorker>({ type: 'stats_collect', id, ...(allGauges ? { allGauges } : {}) })) collection.waiting.add(index);
    });
    if (this.extraSource) {
      collection.waiting.add(EXTRA);
      this.extraSource().then(
        (source) => this.onExtra(id, source),
        () => this.onExtra(id, undefined),
      );
    }
    if (collection.waiting.size === 0) this.close(id);
  }

  private onExtra(id: number, source: [string, StatsDelta] | undefined): void {
    const collection = this.open.get(id);
    if (!collection) {
      // Late: forwarded on its own, as a late worker's delta is (its counter deltas exist nowhere else).
      if (source) this.toAdmin({ type: 'stats', id: -1, sources: [source] });
      return;
    }
    if (source) collection.sources.push(source);
    collection.waiting.delete(EXTRA);
    if (collection.waiting.size === 0) this.close(id);
  }

  onWorkerStats(m: Extract<FromWorker, { type: 'stats' }>): void {
    const collection = this.open.get(m.id);
    if (!collection) {
      this.toAdmin({ type: 'stats', id: -1, sources: [[`worker_${m.index}`, m.delta]] });
      return;
    }
    collection.sources.push([`worker_${m.index}`, m.delta]);
    collection.waiting.delete(m.index);
    if (collection.waiting.size === 0) this.close(m.id);
  }

  private close(id: number): void {
    const collection = this.open.get(id);
    if (!collection) return;
    clearTimeout(collection.timer);
    this.open.delete(id);
    this.toAdmin({ type: 'stats', id, sources: collection.sources });
  }
}
