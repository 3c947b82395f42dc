import type { LbPolicy } from '../../shared/upstream/lb-policy.js';
/**
 * Envoy's ROUND_ROBIN, LEAST_REQUEST and RANDOM policies over weighted hosts. Each is a small
 * object with one `pick()`, chosen once per cluster, so no policy check runs per request.
 */

export interface Balanced {
  weight: number;
  activeRequests: number;
}

export interface LoadBalancer<H extends Balanced> {
  pick(hosts: readonly H[]): H | undefined;
}

const allEqual = (hosts: readonly Balanced[]) => hosts.every((h) => h.weight === hosts[0]!.weight);

/**
 * Weighted round robin, smooth (each host's share is spread out rather than sent in runs), which
 * gives the same long-run split as Envoy's earliest-deadline-first scheduler.
 */
export class RoundRobin<H extends Balanced> implements LoadBalancer<H> {
  private next = 0;
  private current = new WeakMap<H, number>();

  pick(hosts: readonly H[]): H | undefined {
    if (hosts.length === 0) return undefined;
    if (allEqual(hosts)) return hosts[this.next++ % hosts.length];
    let total = 0;
    let best: H | undefined;
    let bestValue = -Infinity;
    for (const h of hosts) {
      const value = (this.current.get(h) ?? 0) + h.weight;
      this.current.set(h, value);
      total += h.weight;
      if (value > bestValue) {
        bestValue = value;
        best = h;
      }
    }
    this.current.set(best!, bestValue - total);
    return best;
  }
}

/** Power of two choices on active requests; with unequal weights, weight / (active + 1) decides. */
export class LeastRequest<H extends Balanced> implements LoadBalancer<H> {
  constructor(private readonly choiceCount = 2) {}

  pick(hosts: readonly H[]): H | undefined {
    if (hosts.length <= 1) return hosts[0];
    const weighted = !allEqual(hosts);
    let best: H | undefined;
    let bestScore = -Infinity;
    for (let i = 0; i < this.choiceCount; i++) {
      const h = hosts[Math.floor(Math.random() * hosts.length)]!;
      const score = weighted ? h.weight / (h.activeRequests + 1) : -h.activeRequests;
      if (score > bestScore) {
        bestScore = score;
        best = h;
      }
    }
    return best;
  }
}

export class RandomBalancer<H extends Balanced> implements LoadBalancer<H> {
  pick(hosts: readonly H[]): H | undefined {
    if (hosts.length <= 1) return hosts[0];
    if (allEqual(hosts)) return hosts[Math.floor(Math.random() * hosts.length)];
    const total = hosts.reduce((s, h) => s + h.weight, 0);
    let r = Math.random() * total;
    for (const h of hosts) {
      r -= h.weight;
      if (r < 0) return h;
    }
    return hosts[hosts.length - 1];
  }
}

export function loadBalancerFor<H extends Balanced>(policy: LbPolicy): LoadBalancer<H> {
  switch (policy.kind) {
    case 'LEAST_REQUEST':
      return new LeastRequest<H>(policy.choiceCount);
    case 'RANDOM':
      return new RandomBalancer<H>();
    default:
      return new RoundRobin<H>();
  }
}
