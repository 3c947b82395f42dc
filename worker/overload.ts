import { v8Module } from '../shared/builtins.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { getLogger } from '../shared/log/logger.js';
import { native } from '../shared/native/index.js';
import { ACTIONS, overloadConfigOf, triggerState, type OverloadConfig } from '../shared/overload/config.js';
import { stats } from '../shared/stats/process.js';

const log = getLogger('main', import.meta.url);

/**
 * This worker's overload manager (the bootstrap's overload_manager): every refresh_interval it
 * measures its resource monitors (fixed_heap: this worker's V8 heap in use), sets each action's
 * state from its triggers, and keeps Envoy's figures: `overload.<monitor>.pressure` (0-100, the
 * largest of the workers'), `overload.<action>.active` and `.scale_percent`. What the actions do
 * is read where it matters, cheaply: `overload.stopAcceptingRequests` and `keepaliveOff` by the
 * connection manager; shrink_heap here, every 10 s while saturated, as Envoy's timer does.
 */
export const overload = {
  /** stop_accepting_requests is saturated: new requests are answered 503 "envoy overloaded". */
  stopAcceptingRequests: false,
  /** disable_http_keepalive's state (0..1): the share of requests whose connection closes after them. */
  keepaliveOff: 0,
};

const SHRINK_EVERY_MS = 10_000;

export function startOverloadManager(bootstrap: JsonObject): void {
  const config = overloadConfigOf(bootstrap);
  if (!config) return;
  const pressureGauges = new Map([...config.fixedHeap.keys()].map((name) => [name, stats.gauge(`overload.${name}.pressure`, 'local')]));
  const actionStats = config.actions.map((a) => ({ action: a, active: stats.gauge(`overload.${a.name}.active`, 'local'), scale: stats.gauge(`overload.${a.name}.scale_percent`, 'local') }));
  const delay = stats.histogram('overload.refresh_interval_delay');
  const states = new Map<string, number>();
  let due = performance.now() + config.refreshMs;
  const refresh = () => {
    delay.record(Math.max(0, Math.round(performance.now() - due)));
    due = performance.now() + config.refreshMs;
    evaluate(config, pressureGauges, actionStats, states);
  };
  evaluate(config, pressureGauges, actionStats, states);
  setInterval(refresh, config.refreshMs).unref();
  if (config.actions.some((a) => a.name === ACTIONS.shrinkHeap)) {
    const shrinks = stats.counter(`overload.${ACTIONS.shrinkHeap}.shrink_count`);
    setInterval(() => {
      if ((states.get(ACTIONS.shrinkHeap) ?? 0) < 1) return;
      native.lowMemory();
      native.mallocTrim();
      shrinks.inc();
    }, SHRINK_EVERY_MS).unref();
  }
}

function evaluate(
  config: OverloadConfig,
  pressureGauges: Map<string, { set(v: number): void }>,
  actionStats: { action: OverloadConfig['actions'][number]; active: { set(v: number): void }; scale: { set(v: number): void } }[],
  states: Map<string, number>,
): void {
  const pressures = new Map<string, number>();
  const used = v8Module().getHeapStatistics().used_heap_size;
  for (const [name, max] of config.fixedHeap) {
    const pressure = max > 0 ? used / max : 0;
    pressures.set(name, pressure);
    pressureGauges.get(name)!.set(Math.round(Math.min(pressure, 1) * 100));
  }
  for (const { action, active, scale } of actionStats) {
    let state = 0;
    for (const t of action.triggers) state = Math.max(state, triggerState(t, pressures.get(t.monitor) ?? 0));
    const before = states.get(action.name) ?? 0;
    states.set(action.name, state);
    active.set(state >= 1 ? 1 : 0);
    scale.set(Math.round(state * 100));
    if ((before >= 1) !== (state >= 1)) log.warn(`overload action ${action.name} is ${state >= 1 ? 'saturated' : 'no longer saturated'}`);
  }
  overload.stopAcceptingRequests = (states.get(ACTIONS.stopAcceptingRequests) ?? 0) >= 1;
  overload.keepaliveOff = states.get(ACTIONS.disableHttpKeepalive) ?? 0;
}
