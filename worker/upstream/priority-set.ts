import { coarseHealth, isExcluded } from '../../shared/upstream/health.js';
import type { UpstreamHost } from '../../shared/upstream/hosts.js';
import { RoundRobin } from './load-balancer.js';

/**
 * A cluster's hosts by priority, and the share of requests each priority gets, as Envoy's load
 * balancer base computes it:
 *
 * - A level's health is `overprovisioning_factor × healthy / hosts` (integer percent, capped at
 *   100; excluded hosts not counted), and likewise its degraded availability.
 * - The total availability (the sum, capped at 100) scales the levels: healthy load goes to the
 *   levels in order, each taking `health × 100 / total` of what is left, then the rest by degraded
 *   availability; rounding leftovers go to the first level that has any.
 * - Panic: never while the total is 100; otherwise a level is in panic when its healthy and
 *   degraded percentage is under healthy_panic_threshold, and it then uses all its hosts. When
 *   every level is in panic, load goes by host counts.
 * - With locality_weighted_lb_config, a level's healthy (or degraded) hosts are picked by locality
 *   first, each locality weighted by `load_balancing_weight × min(1, factor × available / hosts)`.
 *
 */

export interface LevelHost {
  info: UpstreamHost;
}

interface Level<H extends LevelHost> {
  all: H[];
  healthy: H[];
  degraded: H[];
  /** Hosts not excluded. */
  count: number;
  panic: boolean;
  /** Locality-weighted: the healthy and degraded hosts by locality, with effective weights. */
  healthyLocalities: Locality<H>[] | undefined;
  degradedLocalities: Locality<H>[] | undefined;
}

interface Locality<H> {
  hosts: H[];
  weight: number;
  activeRequests: number;
}

export type HostSource = 'healthy' | 'degraded' | 'all';

/** A retry's say in the priority (the previous_priorities retry priority, see worker/http/retry-state.ts). */
export interface PrioritySteering {
  excludedPriorities(): ReadonlySet<number> | undefined;
  priorityExclusionExhausted(): void;
}

export class PrioritySet<H extends LevelHost> {
  levels: Level<H>[] = [];
  private healthyLoad: number[] = [];
  private degradedLoad: number[] = [];
  /** Every level in panic (or a single level): the whole choice is simple. */
  private single = true;
  private factor = 140;
  private readonly localityPickers = new WeakMap<Locality<H>[], RoundRobin<Locality<H>>>();

  constructor(
    private readonly panicThreshold: number,
    private readonly localityWeighted: boolean,
  ) {}

  update(hosts: readonly H[]): void {
    const byPriority: H[][] = [];
    for (const h of hosts) (byPriority[h.info.priority] ??= []).push(h);
    const factor = hosts[0]?.info.overprovisioningFactor ?? 140;
    this.factor = factor;
    this.levels = Array.from({ length: Math.max(1, byPriority.length) }, (_, p) => this.level(byPriority[p] ?? [], factor));
    const { healthyLoad, degradedLoad, total } = this.loads();
    this.healthyLoad = healthyLoad;
    this.degradedLoad = degradedLoad;
    if (this.panicThreshold === 0 && total === 0) {
      this.healthyLoad[0] = 100;
      for (const l of this.levels) l.panic = false;
    } else {
      let totalPanic = true;
      for (const l of this.levels) {
        const available = l.count === 0 ? 0 : (100 * (l.healthy.length + l.degraded.length)) / l.count;
        l.panic = total === 100 ? false : available < this.panicThreshold;
        totalPanic &&= l.panic;
      }
      if (totalPanic) this.loadByHostCount();
    }
    this.single = this.levels.length === 1 && this.degradedLoad[0] === 0;
  }

  /** Envoy's priority load: each level's share of requests by its health (levels in `excluded` count as having none). */
  private loads(excluded?: ReadonlySet<number>): { healthyLoad: number[]; degradedLoad: number[]; total: number } {
    const factor = this.factor;
    const share = (l: Level<H>, p: number, n: number) => (l.count > 0 && !excluded?.has(p) ? Math.min(100, Math.floor((factor * n) / l.count)) : 0);
    const health = this.levels.map((l, p) => share(l, p, l.healthy.length));
    const degraded = this.levels.map((l, p) => share(l, p, l.degraded.length));
    const total = Math.min(100, health.reduce((a, b) => a + b, 0) + degraded.reduce((a, b) => a + b, 0));
    const healthyLoad = this.levels.map(() => 0);
    const degradedLoad = this.levels.map(() => 0);
    if (total > 0) {
      const healthy = distribute(healthyLoad, health, 100, total);
      const rest = distribute(degradedLoad, degraded, healthy.remaining, total);
      if (rest.remaining > 0) {
        if (healthy.first >= 0) healthyLoad[healthy.first]! += rest.remaining;
        else degradedLoad[rest.first]! += rest.remaining;
      }
    }
    return { healthyLoad, degradedLoad, total };
  }

  private level(all: H[], factor: number): Level<H> {
    const included = all.filter((h) => !isExcluded(h.info.healthFlags));
    const healthy = included.filter((h) => coarseHealth(h.info.healthFlags) === 'healthy');
    const degraded = included.filter((h) => coarseHealth(h.info.healthFlags) === 'degraded');
    return {
      all,
      healthy,
      degraded,
      count: included.length,
      panic: false,
      healthyLocalities: this.localityWeighted ? localities(included, healthy, factor) : undefined,
      degradedLocalities: this.localityWeighted ? localities(included, degraded, factor) : undefined,
    };
  }

  /** Total panic: each level's share is its share of all hosts. */
  private loadByHostCount(): void {
    const total = this.levels.reduce((n, l) => n + l.all.length, 0);
    this.degradedLoad.fill(0);
    if (total === 0) {
      this.healthyLoad.fill(0);
      this.healthyLoad[0] = 100;
      return;
    }
    let left = 100;
    let first = -1;
    this.levels.forEach((l, i) => {
      if (first < 0 && l.all.length > 0) first = i;
      this.healthyLoad[i] = Math.floor((100 * l.all.length) / total);
      left -= this.healthyLoad[i]!;
    });
    this.healthyLoad[first]! += left;
  }

  /**
   * The hosts a request chooses among: its priority (drawn from 1 to 100: by its hash when it has
   * one, else at random), then that level's
   * healthy or degraded hosts (or, in panic, all of them; with locality weighting, one locality's).
   */
  choose(hash: bigint | undefined, retry?: PrioritySteering): { hosts: readonly H[]; panic: boolean } {
    let level: Level<H>;
    let source: HostSource;
    const excluded = retry?.excludedPriorities();
    if (excluded?.size) {
      // previous_priorities: the load without the levels already tried; none left, and the tries start over.
      const steered = this.loads(excluded);
      if (steered.total > 0) ({ level, source } = this.priority(this.draw(hash), steered.healthyLoad, steered.degradedLoad));
      else {
        retry!.priorityExclusionExhausted();
        return this.choose(hash);
      }
    } else if (this.single) {
      level = this.levels[0]!;
      source = 'healthy';
    } else {
      ({ level, source } = this.priority(this.draw(hash), this.healthyLoad, this.degradedLoad));
    }
    if (level.panic) return { hosts: level.all, panic: true };
    const localities = source === 'healthy' ? level.healthyLocalities : level.degradedLocalities;
    if (localities?.length) return { hosts: this.locality(localities).hosts, panic: false };
    return { hosts: source === 'healthy' ? (level.healthy.length ? level.healthy : level.degraded) : level.degraded, panic: false };
  }

  /** A request's draw from 1 to 100: by its hash when it has one, else at random. */
  private draw(hash: bigint | undefined): number {
    return hash !== undefined ? Number(hash % 100n) + 1 : Math.floor(Math.random() * 100) + 1;
  }

  private priority(draw: number, healthyLoad: number[], degradedLoad: number[]): { level: Level<H>; source: HostSource } {
    let sum = 0;
    for (let p = 0; p < this.levels.length; p++) {
      sum += healthyLoad[p]!;
      if (draw <= sum) return { level: this.levels[p]!, source: 'healthy' };
    }
    for (let p = 0; p < this.levels.length; p++) {
      sum += degradedLoad[p]!;
      if (draw <= sum) return { level: this.levels[p]!, source: 'degraded' };
    }
    return { level: this.levels[0]!, source: 'healthy' };
  }

  private locality(localities: Locality<H>[]): Locality<H> {
    let picker = this.localityPickers.get(localities);
    if (!picker) this.localityPickers.set(localities, (picker = new RoundRobin<Locality<H>>()));
    return picker.pick(localities)!;
  }
}

/** Envoy's distributeLoad: each level in order takes `availability × 100 / total` of what is left. */
function distribute(load: number[], availability: number[], total: number, normalized: number): { first: number; remaining: number } {
  let first = -1;
  for (let i = 0; i < availability.length; i++) {
    if (first < 0 && availability[i]! > 0) first = i;
    load[i] = Math.min(total, Math.floor((availability[i]! * 100) / normalized));
    total -= load[i]!;
  }
  return { first, remaining: total };
}

/** A level's available hosts by locality, weighted as Envoy's effective locality weight; localities of weight 0 left out. */
function localities<H extends LevelHost>(included: H[], available: H[], factor: number): Locality<H>[] {
  const key = (h: H) => `${h.info.region}/${h.info.zone}/${h.info.subZone}`;
  const counts = new Map<string, number>();
  for (const h of included) counts.set(key(h), (counts.get(key(h)) ?? 0) + 1);
  const groups = new Map<string, H[]>();
  for (const h of available) {
    const k = key(h);
    const g = groups.get(k);
    if (g) g.push(h);
    else groups.set(k, [h]);
  }
  const out: Locality<H>[] = [];
  for (const [k, hosts] of groups) {
    const weight = hosts[0]!.info.localityWeight * Math.min(1, (factor / 100) * (hosts.length / counts.get(k)!));
    if (weight > 0) out.push({ hosts, weight, activeRequests: 0 });
  }
  return out;
}
