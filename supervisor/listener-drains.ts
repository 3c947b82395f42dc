import { canonicalText } from '../shared/config/resource-hash.js';
import { filterChainsOf, type ListenerResource } from '../shared/config/resources.js';
import { stats } from '../shared/stats/process.js';
import type { Listener } from '../shared/config/envoy-types.js';

/**
 * What drains after a listener change, as the supervisor keeps count of it: listener versions
 * replaced or removed (for /config_dump's draining_state and `total_listeners_draining`) and the
 * filter chains an in-place update left behind (`total_filter_chains_draining`), each for the
 * drain time. The workers drain the connections themselves, on the same clock.
 */

/** A listener that stopped accepting and whose connections are being drained. */
export interface DrainingListener {
  resource: ListenerResource;
  /** ms since the epoch. */
  startedAt: number;
}

/** Everything but the filter chains, as text: two versions equal here differ in their chains only (an in-place update). */
export function withoutChains(config: Listener): string {
  const { filter_chains: _f, default_filter_chain: _d, ...rest } = config;
  return canonicalText(rest);
}

/** The keys of `before`'s filter chains that `after` does not have unchanged (those drain on an in-place update). */
export function changedFilterChains(before: Listener, after: Listener): string[] {
  const kept = new Set(filterChainsOf(after).map(([, c]) => canonicalText(c)));
  return filterChainsOf(before)
    .filter(([, c]) => !kept.has(canonicalText(c)))
    .map(([key]) => key);
}

export class ListenerDrains {
  private readonly listeners = new Set<DrainingListener>();
  // Envoy's NeverImport gauges: a hot-restart parent's figures are not added to the child's.
  private readonly listenersGauge = stats.gauge('listener_manager.total_listeners_draining', 'local');
  private readonly chainsGauge = stats.gauge('listener_manager.total_filter_chains_draining', 'local');
  /** Called when a listener's drain has ended. */
  onDrained: (() => void) | undefined;

  constructor(private readonly drainTimeMs: () => number) {
    this.listenersGauge.set(0);
    this.chainsGauge.set(0);
  }

  get now(): DrainingListener[] {
    return [...this.listeners];
  }

  /** A whole listener version drains. */
  listener(resource: ListenerResource, nowMs: number): void {
    const entry: DrainingListener = { resource, startedAt: nowMs };
    this.listeners.add(entry);
    this.listenersGauge.set(this.listeners.size);
    setTimeout(() => {
      this.listeners.delete(entry);
      this.listenersGauge.set(this.listeners.size);
      this.onDrained?.();
    }, this.drainTimeMs()).unref();
  }

  /** An in-place update: the chains of `before` that `after` changed or dropped drain. */
  chains(before: ListenerResource, after: Listener): void {
    const count = changedFilterChains(before.config, after).length;
    if (count === 0) return;
    this.chainsGauge.inc(count);
    setTimeout(() => this.chainsGauge.dec(count), this.drainTimeMs()).unref();
  }
}
