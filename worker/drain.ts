import type { TrafficDirection } from '../shared/config/resources.js';
import type { DrainOrder } from '../shared/ipc.js';

/**
 * Whether a response should tell its client to go away (Envoy's DrainManager::drainClose()):
 * HTTP/1 gets `Connection: close`, HTTP/2 a GOAWAY. Once a drain covers a listener's direction,
 * `immediate` says yes to every response; `gradual` says yes with a probability that rises
 * linearly, in whole seconds, from about 1/drain_time to 1 at the deadline. A server whose health
 * checks are failed (POST /healthcheck/fail) always says yes, so load balancers and clients move
 * away together.
 *
 * The worker has one for the whole tree's drains (hot restart, /drain_listeners); each filter
 * chain has a child of it, which also drains alone when its listener is changed or removed.
 */

export class DrainManager {
  private readonly drains: DrainOrder[] = [];
  private readonly startListeners: ((order: DrainOrder) => void)[] = [];
  private readonly children = new Set<DrainManager>();

  constructor(
    private readonly healthCheckFailing: () => boolean,
    private readonly parent?: DrainManager,
  ) {}

  /** A drain manager that drains with this one, and alone when told (a filter chain's); dispose() it when its chain is gone. */
  child(): DrainManager {
    const child = new DrainManager(this.healthCheckFailing, this);
    this.children.add(child);
    return child;
  }

  dispose(): void {
    this.parent?.children.delete(this);
  }

  start(order: DrainOrder): void {
    this.drains.push(order);
    this.notify(order);
  }

  private notify(order: DrainOrder): void {
    for (const listener of this.startListeners) listener(order);
    for (const child of this.children) child.notify(order);
  }

  /** Calls `listener` for every drain, those already started included (the parent's too). */
  onStart(listener: (order: DrainOrder) => void): void {
    this.startListeners.push(listener);
    for (const order of this.allDrains()) listener(order);
  }

  private allDrains(): DrainOrder[] {
    return [...(this.parent?.allDrains() ?? []), ...this.drains];
  }

  draining(direction: TrafficDirection): DrainOrder | undefined {
    return this.drains.find((d) => d.direction === 'all' || direction === 'INBOUND') ?? this.parent?.draining(direction);
  }

  drainClose(direction: TrafficDirection): boolean {
    if (this.healthCheckFailing()) return true;
    const drain = this.draining(direction);
    if (!drain) return false;
    if (drain.strategy === 'immediate' || drain.drainTimeMs <= 0) return true;
    const now = Date.now();
    const deadline = drain.startedAt + drain.drainTimeMs;
    if (now >= deadline) return true;
    const drainSeconds = Math.max(1, Math.floor(drain.drainTimeMs / 1000));
    const elapsed = drainSeconds - Math.floor((deadline - now) / 1000);
    return elapsed > Math.floor(Math.random() * drainSeconds);
  }
}
