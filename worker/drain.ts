import type { DrainOrder, ListenerInfo } from '../shared/ipc.js';

/**
 * Whether a response should tell its client to go away (Envoy's DrainManager::drainClose()):
 * HTTP/1 gets `Connection: close`, HTTP/2 a GOAWAY. Once a drain covers a listener's direction,
 * `immediate` says yes to every response; `gradual` says yes with a probability that rises
 * linearly, in whole seconds, from about 1/drain_time to 1 at the deadline. A server whose health
 * checks are failed (POST /healthcheck/fail) always says yes, so load balancers and clients move
 * away together.
 */

export class DrainManager {
  private readonly drains: DrainOrder[] = [];
  private readonly startListeners: ((order: DrainOrder) => void)[] = [];

  constructor(private readonly healthCheckFailing: () => boolean) {}

  start(order: DrainOrder): void {
    this.drains.push(order);
    for (const listener of this.startListeners) listener(order);
  }

  /** Calls `listener` for every drain, those already started included. */
  onStart(listener: (order: DrainOrder) => void): void {
    this.startListeners.push(listener);
    for (const order of this.drains) listener(order);
  }

  draining(direction: ListenerInfo['trafficDirection']): DrainOrder | undefined {
    return this.drains.find((d) => d.direction === 'all' || direction === 'INBOUND');
  }

  drainClose(direction: ListenerInfo['trafficDirection']): boolean {
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
