import { list, obj } from '../config/access.js';
import { configError, type ConfigError } from '../config/config-error.js';
import type { JsonObject } from '../config/proto-json.js';
import { durationMs, typeNameOfUrl } from '../config/wkt.js';

/**
 * The bootstrap's overload_manager, as Envoy's OverloadManagerImpl reads it: resource monitors,
 * each measured every refresh_interval, and actions whose triggers turn them on from a monitor's
 * pressure: a `threshold` (saturated at or above its value) or `scaled` (0 below
 * scaling_threshold, saturated at saturation_threshold, in proportion between). An action's state
 * is the largest of its triggers'. The actions this proxy takes are ACTIONS; any other is
 * refused by name, so that none is configured to do nothing.
 */

export const ACTIONS = {
  stopAcceptingRequests: 'envoy.overload_actions.stop_accepting_requests',
  disableHttpKeepalive: 'envoy.overload_actions.disable_http_keepalive',
  shrinkHeap: 'envoy.overload_actions.shrink_heap',
  stopAcceptingConnections: 'envoy.overload_actions.stop_accepting_connections',
  rejectIncomingConnections: 'envoy.overload_actions.reject_incoming_connections',
  reduceTimeouts: 'envoy.overload_actions.reduce_timeouts',
  resetHighMemoryStream: 'envoy.overload_actions.reset_high_memory_stream',
} as const;

const REFUSED_ACTIONS: Record<string, string> = {};

/** Envoy's proactive monitor: every listener's open connections, across the workers, against a maximum (tried on each accept). */
export const GLOBAL_CONNECTIONS_MONITOR = 'envoy.resource_monitors.global_downstream_max_connections';
const FIXED_HEAP = 'envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig';
const INJECTED = 'envoy.extensions.resource_monitors.injected_resource.v3.InjectedResourceConfig';
const DOWNSTREAM_CONNECTIONS = 'envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig';
export const SCALE_TIMERS = 'envoy.config.overload.v3.ScaleTimersOverloadActionConfig';

/** reduce_timeouts' timers (ScaleTimersOverloadActionConfig.TimerType). */
export type ScaledTimer = 'HTTP_DOWNSTREAM_CONNECTION_IDLE' | 'HTTP_DOWNSTREAM_STREAM_IDLE' | 'TRANSPORT_SOCKET_CONNECT' | 'HTTP_DOWNSTREAM_CONNECTION_MAX' | 'HTTP_DOWNSTREAM_STREAM_FLUSH';
const TIMER_TYPES: readonly string[] = ['UNSPECIFIED', 'HTTP_DOWNSTREAM_CONNECTION_IDLE', 'HTTP_DOWNSTREAM_STREAM_IDLE', 'TRANSPORT_SOCKET_CONNECT', 'HTTP_DOWNSTREAM_CONNECTION_MAX', 'HTTP_DOWNSTREAM_STREAM_FLUSH'];

/** Timers this proxy does not have, so that reduce_timeouts would scale nothing. */
const UNSCALED_TIMERS: Record<string, string> = {
  TRANSPORT_SOCKET_CONNECT: 'this proxy has no transport socket connect timeout (FilterChain.transport_socket_connect_timeout is refused)',
  HTTP_DOWNSTREAM_STREAM_FLUSH: 'this proxy has no stream flush timeout (stream_flush_timeout is refused)',
};

/** How far a timer may be cut while reduce_timeouts is active: to an absolute minimum, or to a share of its configured value. */
export type TimerMinimum = { minMs: number } | { minScale: number };

export interface Trigger {
  monitor: string;
  /** threshold: saturated at or above; scaled: [scaling, saturation]. */
  threshold?: number;
  scaled?: [number, number];
}

export interface OverloadConfig {
  refreshMs: number;
  /** fixed_heap monitors: name → max_heap_size_bytes. */
  fixedHeap: Map<string, number>;
  /** injected_resource monitors: name → the file whose number is the pressure. */
  injected: Map<string, string>;
  /** The global_downstream_max_connections monitor's max_active_downstream_connections, when configured. */
  maxGlobalConnections: number | undefined;
  actions: { name: string; triggers: Trigger[] }[];
  /** reduce_timeouts' timer_scale_factors. */
  timerMinimums: Map<ScaledTimer, TimerMinimum>;
  /** buffer_factory_config.minimum_account_to_track_power_of_two (0: no stream's buffers are accounted). */
  minimumAccountPowerOfTwo: number;
}

function timerTypeOf(v: unknown): string | undefined {
  return typeof v === 'number' ? TIMER_TYPES[v] : typeof v === 'string' ? v : undefined;
}

export function overloadConfigOf(bootstrap: JsonObject): OverloadConfig | undefined {
  if (bootstrap.overload_manager === undefined) return undefined;
  const om = obj(bootstrap.overload_manager);
  const fixedHeap = new Map<string, number>();
  const injected = new Map<string, string>();
  let maxGlobalConnections: number | undefined;
  for (const m of list(om.resource_monitors)) {
    const typed = obj(m.typed_config);
    const type = typeNameOfUrl(String(typed['@type'] ?? ''));
    if (type === FIXED_HEAP) fixedHeap.set(String(m.name), Number(typed.max_heap_size_bytes ?? 0));
    else if (type === INJECTED) injected.set(String(m.name), String(typed.filename ?? ''));
    else if (type === DOWNSTREAM_CONNECTIONS) maxGlobalConnections = Number(typed.max_active_downstream_connections ?? 0);
  }
  const actions = list(om.actions).map((a) => ({
    name: String(a.name),
    triggers: list(a.triggers).map((t) => {
      const trigger: Trigger = { monitor: String(t.name) };
      if (t.threshold !== undefined) trigger.threshold = Number(obj(t.threshold).value ?? 0);
      if (t.scaled !== undefined) trigger.scaled = [Number(obj(t.scaled).scaling_threshold ?? 0), Number(obj(t.scaled).saturation_threshold ?? 0)];
      return trigger;
    }),
  }));
  const timerMinimums = new Map<ScaledTimer, TimerMinimum>();
  const reduce = list(om.actions).find((a) => a.name === ACTIONS.reduceTimeouts);
  for (const f of list(obj(reduce?.typed_config).timer_scale_factors)) {
    const timer = timerTypeOf(f.timer) as ScaledTimer | undefined;
    if (!timer) continue;
    timerMinimums.set(timer, f.min_timeout !== undefined ? { minMs: durationMs(String(f.min_timeout)) } : { minScale: Number(obj(f.min_scale).value ?? 0) / 100 });
  }
  const minimumAccountPowerOfTwo = Number(obj(om.buffer_factory_config).minimum_account_to_track_power_of_two ?? 0);
  return { refreshMs: typeof om.refresh_interval === 'string' ? durationMs(om.refresh_interval) : 1000, fixedHeap, injected, maxGlobalConnections, actions, timerMinimums, minimumAccountPowerOfTwo };
}

/** The checks Envoy's OverloadManagerImpl makes when it is built, in its words, and the actions this proxy refuses. */
export function checkOverloadManager(bootstrap: JsonObject, errors: ConfigError[]): void {
  if (bootstrap.overload_manager === undefined) return;
  const om = obj(bootstrap.overload_manager);
  const monitors = new Set<string>();
  list(om.resource_monitors).forEach((m, i) => {
    const name = String(m.name ?? '');
    const path = `overload_manager.resource_monitors[${i}]`;
    if (monitors.has(name)) errors.push(configError('duplicate', `${path}.name`, `Duplicate resource monitor ${name}`));
    monitors.add(name);
    // Envoy tells its proactive monitor by name: its configuration type under another name, or another type under its name, finds no factory.
    const type = typeNameOfUrl(String(obj(m.typed_config)['@type'] ?? ''));
    if ((name === GLOBAL_CONNECTIONS_MONITOR) !== (type === DOWNSTREAM_CONNECTIONS)) {
      errors.push(configError('invalid', `${path}.name`, `the ${DOWNSTREAM_CONNECTIONS} monitor is named ${GLOBAL_CONNECTIONS_MONITOR}, and that name takes only it`));
    }
  });
  const actions = new Set<string>();
  list(om.actions).forEach((a, i) => {
    const name = String(a.name ?? '');
    const path = `overload_manager.actions[${i}]`;
    if (actions.has(name)) errors.push(configError('duplicate', `${path}.name`, `Duplicate overload action ${name}`));
    actions.add(name);
    if (REFUSED_ACTIONS[name]) errors.push(configError('unsupported', `${path}.name`, `${name}: ${REFUSED_ACTIONS[name]}`));
    else if (!Object.values(ACTIONS).includes(name as never)) errors.push(configError('unsupported', `${path}.name`, `Unknown Overload Manager Action ${name} (this proxy takes ${Object.values(ACTIONS).join(', ')})`));
    if (name === ACTIONS.reduceTimeouts) checkScaleTimers(a.typed_config, `${path}.typed_config`, errors);
    else if (name === ACTIONS.resetHighMemoryStream && om.buffer_factory_config === undefined) errors.push(configError('missing', `${path}.name`, `Overload action "${name}" requires buffer_factory_config.`));
    else if (a.typed_config !== undefined) errors.push(configError('invalid', `${path}.typed_config`, `Overload action "${name}" has an unexpected value for the typed_config field`));
    const triggered = new Set<string>();
    list(a.triggers).forEach((t, j) => {
      const monitor = String(t.name ?? '');
      const tPath = `${path}.triggers[${j}]`;
      if (!monitors.has(monitor)) errors.push(configError('unknown_reference', `${tPath}.name`, `Unknown trigger resource ${monitor} for overload action ${name}`));
      else if (monitor === GLOBAL_CONNECTIONS_MONITOR) errors.push(configError('unsupported', `${tPath}.name`, `${GLOBAL_CONNECTIONS_MONITOR} is measured on each accept, not each refresh: it triggers no action (it refuses connections past its maximum itself)`));
      if (triggered.has(monitor)) errors.push(configError('duplicate', `${tPath}.name`, `Duplicate trigger resource for overload action ${name}`));
      triggered.add(monitor);
      const scaled = obj(t.scaled);
      if (t.scaled !== undefined && Number(scaled.scaling_threshold ?? 0) >= Number(scaled.saturation_threshold ?? 0)) {
        errors.push(configError('invalid', `${tPath}.scaled`, 'scaling_threshold must be less than saturation_threshold'));
      }
    });
  });
}

/** reduce_timeouts' ScaleTimersOverloadActionConfig, as Envoy's parseTimerMinimums reads it. */
function checkScaleTimers(typedConfig: unknown, path: string, errors: ConfigError[]): void {
  const typed = obj(typedConfig);
  if (typeNameOfUrl(String(typed['@type'] ?? '')) !== SCALE_TIMERS) {
    errors.push(configError('missing', path, `${ACTIONS.reduceTimeouts} needs a ${SCALE_TIMERS}`));
    return;
  }
  const seen = new Set<string>();
  list(typed.timer_scale_factors).forEach((f, k) => {
    const timer = timerTypeOf(f.timer);
    const fPath = `${path}.timer_scale_factors[${k}]`;
    if (!timer || timer === 'UNSPECIFIED') errors.push(configError('invalid', `${fPath}.timer`, `Unknown timer type ${String(f.timer)}`));
    else if (seen.has(timer)) errors.push(configError('duplicate', `${fPath}.timer`, `Found duplicate entry for timer type ${timer}`));
    else if (UNSCALED_TIMERS[timer]) errors.push(configError('unsupported', `${fPath}.timer`, `${timer}: ${UNSCALED_TIMERS[timer]}`));
    if (timer) seen.add(timer);
    if (f.min_timeout === undefined && f.min_scale === undefined) errors.push(configError('missing', fPath, 'a scale timer needs min_timeout or min_scale'));
  });
}

/** A trigger's state for a pressure (0..1): 0 inactive, 1 saturated, between for a scaled one. */
export function triggerState(t: Trigger, pressure: number): number {
  if (t.threshold !== undefined) return pressure >= t.threshold ? 1 : 0;
  if (t.scaled) {
    const [scaling, saturation] = t.scaled;
    if (pressure < scaling) return 0;
    if (pressure >= saturation) return 1;
    return (pressure - scaling) / (saturation - scaling);
  }
  return 0;
}
