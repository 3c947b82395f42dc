import { readFileSync } from 'node:fs';
import { v8Module } from '../shared/builtins.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { getLogger } from '../shared/log/logger.js';
import { native } from '../shared/native/index.js';
import { ACTIONS, overloadConfigOf, triggerState, type OverloadConfig, type ScaledTimer, type TimerMinimum } from '../shared/overload/config.js';
import { stats } from '../shared/stats/process.js';
import type { Counter, Gauge } from '../shared/stats/store.js';
import { resetStreamsGivenPressure, trackStreamAccounts } from './http/stream-accounts.js';

const log = getLogger('main', import.meta.url);

/**
 * This worker's overload manager (the bootstrap's overload_manager): every refresh_interval it
 * measures its resource monitors (fixed_heap: this worker's V8 heap in use; injected_resource: the
 * number in a file), sets each action's state from its triggers, and keeps Envoy's figures:
 * `overload.<monitor>.pressure` (percent, not capped; the largest of the workers'), `.failed_updates`,
 * `.skipped_updates`, `overload.<action>.active` and `.scale_percent`. What the actions do is read
 * where it matters, cheaply: `overload.stopAcceptingRequests` and `keepaliveOff` by the connection
 * manager, `rejectFraction` and `maxGlobalConnections` by the listeners, the accepting sockets
 * told of stop_accepting_connections (onStopAccepting), timers scaled by reduce_timeouts
 * (scaledTimeoutMs); shrink_heap here, every 10 s while saturated, as Envoy's timer does.
 */
export const overload = {
  /** stop_accepting_requests is saturated: new requests are answered 503 "envoy overloaded". */
  stopAcceptingRequests: false,
  /** disable_http_keepalive's state (0..1): the share of requests whose connection closes after them. */
  keepaliveOff: 0,
  /** reject_incoming_connections' state (0..1): the share of new connections closed as accepted. */
  rejectFraction: 0,
  /** stop_accepting_connections is configured: listening sockets are served so that they can be paused. */
  pausesAccepting: false,
  /** stop_accepting_connections is saturated: the listening sockets accept nothing (the backlog waits). */
  stopAccepting: false,
  /** The global_downstream_max_connections monitor's maximum (undefined: none; the runtime key may set one). */
  maxGlobalConnections: undefined as number | undefined,
};

const SHRINK_EVERY_MS = 10_000;
/** Envoy's OverloadActionStatsNames ResetStreamsCount (no `overload.` in front). */
const RESET_STREAMS_COUNT = `${ACTIONS.resetHighMemoryStream}.count`;
/** reset_high_memory_stream's last state (its streams are reset when it changes). */
const resets = { state: 0 };
/** The longest delay Node's timers take. */
const MAX_DELAY_MS = 2 ** 31 - 1;

const stopAcceptingListeners = new Set<(stop: boolean) => void>();

/** Told when stop_accepting_connections saturates (true) and when it no longer is (false). */
export function onStopAccepting(f: (stop: boolean) => void): () => void {
  stopAcceptingListeners.add(f);
  return () => stopAcceptingListeners.delete(f);
}

/** reduce_timeouts: its state (0..1) and the timers it scales. */
const reduce = { state: 0, minimums: new Map<ScaledTimer, TimerMinimum>() };
const rescaleListeners = new Set<() => void>();

/**
 * A timer of `type` configured to `ms`, as reduce_timeouts has it now (Envoy's scaled range
 * timer): `ms` while the action is inactive, its minimum (min_timeout, or min_scale of `ms`) at
 * saturation, in proportion between. A timer type the action does not name is never scaled.
 */
export function scaledTimeoutMs(type: ScaledTimer | undefined, ms: number): number {
  if (type === undefined || reduce.state <= 0 || ms <= 0) return ms;
  const m = reduce.minimums.get(type);
  if (!m) return ms;
  const min = Math.min(ms, 'minMs' in m ? m.minMs : ms * m.minScale);
  // At least 1 ms: a timer scaled down to nothing fires at once (0 would turn Node's socket timers off).
  return Math.max(1, Math.round(ms - (ms - min) * reduce.state));
}

/** Told when reduce_timeouts' state changes, so that timers running re-arm at their new length. */
export function onTimerScaleChange(f: () => void): () => void {
  rescaleListeners.add(f);
  return () => rescaleListeners.delete(f);
}

interface Monitor {
  name: string;
  pressure: Gauge;
  failed: Counter;
  read(): number;
}

export function startOverloadManager(bootstrap: JsonObject): void {
  // As Envoy's worker, which has it whether or not the action is configured.
  const streamsReset = stats.counter(RESET_STREAMS_COUNT);
  const config = overloadConfigOf(bootstrap);
  if (!config) return;
  trackStreamAccounts(config.minimumAccountPowerOfTwo);
  overload.pausesAccepting = config.actions.some((a) => a.name === ACTIONS.stopAcceptingConnections);
  overload.maxGlobalConnections = config.maxGlobalConnections;
  reduce.minimums = config.timerMinimums;
  const monitor = (name: string, read: () => number): Monitor => {
    // Each refresh measures synchronously: an update is never pending at the next, so none is skipped (the figure is there, at 0, as Envoy's).
    stats.counter(`overload.${name}.skipped_updates`);
    return { name, pressure: stats.gauge(`overload.${name}.pressure`, 'local'), failed: stats.counter(`overload.${name}.failed_updates`), read };
  };
  const monitors: Monitor[] = [
    ...[...config.fixedHeap].map(([name, max]) => monitor(name, () => (max > 0 ? v8Module().getHeapStatistics().used_heap_size / max : 0))),
    ...[...config.injected].map(([name, file]) => monitor(name, () => injectedPressure(file))),
  ];
  const actionStats = config.actions.map((a) => ({ action: a, active: stats.gauge(`overload.${a.name}.active`, 'local'), scale: stats.gauge(`overload.${a.name}.scale_percent`, 'local') }));
  const delay = stats.histogram('overload.refresh_interval_delay');
  const states = new Map<string, number>();
  const pressures = new Map<string, number>();
  let due = performance.now() + config.refreshMs;
  const refresh = () => {
    delay.record(Math.max(0, Math.round(performance.now() - due)));
    due = performance.now() + config.refreshMs;
    evaluate(monitors, pressures, actionStats, states, streamsReset);
  };
  evaluate(monitors, pressures, actionStats, states, streamsReset);
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

/** Envoy's injected resource monitor: the file holds the pressure, a number (0..1, more is saturated). */
function injectedPressure(file: string): number {
  const text = readFileSync(file, 'utf8').trim();
  const value = Number(text);
  if (text === '' || !Number.isFinite(value) || value < 0) throw new Error(`failed to parse injected resource pressure '${text}' in ${file}`);
  return value;
}

function evaluate(
  monitors: Monitor[],
  pressures: Map<string, number>,
  actionStats: { action: OverloadConfig['actions'][number]; active: Gauge; scale: Gauge }[],
  states: Map<string, number>,
  streamsReset: Counter,
): void {
  for (const m of monitors) {
    try {
      const pressure = m.read();
      pressures.set(m.name, pressure);
      m.pressure.set(Math.floor(pressure * 100)); // as Envoy's gauge: truncated, not capped
    } catch (err) {
      // As Envoy: the update failed, the pressure stays as it was.
      m.failed.inc();
      log.info(`Failed to update resource ${m.name}: ${(err as Error).message}`);
    }
  }
  for (const { action, active, scale } of actionStats) {
    let state = 0;
    // A float, as Envoy's OverloadActionState (UnitFloat): 0.6249999… is 0.625 there, which decides its gauge and reset_high_memory_stream's classes.
    for (const t of action.triggers) state = Math.max(state, Math.fround(triggerState(t, pressures.get(t.monitor) ?? 0)));
    const before = states.get(action.name) ?? 0;
    states.set(action.name, state);
    active.set(state >= 1 ? 1 : 0);
    scale.set(Math.floor(state * 100));
    if ((before >= 1) !== (state >= 1)) log.warn(`overload action ${action.name} is ${state >= 1 ? 'saturated' : 'no longer saturated'}`);
  }
  overload.stopAcceptingRequests = (states.get(ACTIONS.stopAcceptingRequests) ?? 0) >= 1;
  overload.keepaliveOff = states.get(ACTIONS.disableHttpKeepalive) ?? 0;
  overload.rejectFraction = states.get(ACTIONS.rejectIncomingConnections) ?? 0;
  const stop = (states.get(ACTIONS.stopAcceptingConnections) ?? 0) >= 1;
  if (stop !== overload.stopAccepting) {
    overload.stopAccepting = stop;
    for (const f of stopAcceptingListeners) f(stop);
  }
  // reset_high_memory_stream: at each change of its state, as Envoy's worker is told of it.
  const resetState = states.get(ACTIONS.resetHighMemoryStream);
  if (resetState !== undefined && resetState !== resets.state) {
    resets.state = resetState;
    streamsReset.inc(resetStreamsGivenPressure(Math.min(1, resetState)));
  }
  const scale = states.get(ACTIONS.reduceTimeouts) ?? 0;
  if (scale !== reduce.state) {
    reduce.state = scale;
    for (const f of rescaleListeners) f();
  }
}

/** Whether reduce_timeouts scales timers of `type` (then those running re-arm when its state changes). */
export function scalesTimer(type: ScaledTimer | undefined): boolean {
  return type !== undefined && reduce.minimums.has(type);
}

/**
 * A one-shot timer of `type`, `ms` from when it is made, kept at reduce_timeouts' length while
 * it runs (Envoy's scaled range timer): when the action's state changes, it fires at its start
 * plus the new length (at once if that has passed).
 */
export class ScaledTimeout {
  private timer: NodeJS.Timeout | undefined;
  private readonly started = performance.now();
  private readonly unlisten: (() => void) | undefined;

  constructor(
    /** undefined: a timer no overload action scales (its listener has bypass_overload_manager). */
    private readonly type: ScaledTimer | undefined,
    private readonly ms: number,
    private readonly fire: () => void,
  ) {
    this.arm();
    if (scalesTimer(type)) this.unlisten = onTimerScaleChange(() => this.arm());
  }

  private arm(): void {
    clearTimeout(this.timer);
    const left = this.started + scaledTimeoutMs(this.type, this.ms) - performance.now();
    // Node fires a delay past 2^31-1 ms at once: a longer one (days of max_connection_duration) waits in steps.
    this.timer = setTimeout(() => {
      if (left > MAX_DELAY_MS) return this.arm();
      this.stop();
      this.fire();
    }, Math.min(MAX_DELAY_MS, Math.max(0, left)));
    this.timer.unref();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.unlisten?.();
  }
}
