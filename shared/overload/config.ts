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
} as const;

const REFUSED_ACTIONS: Record<string, string> = {
  'envoy.overload_actions.stop_accepting_connections': 'listeners cannot stop accepting while overloaded yet; use stop_accepting_requests',
  'envoy.overload_actions.reject_incoming_connections': 'listeners do not reject connections while overloaded yet; use stop_accepting_requests',
  'envoy.overload_actions.reduce_timeouts': 'timeouts are not scaled while overloaded yet',
  'envoy.overload_actions.reset_high_memory_stream': 'streams are not reset by their memory (Node does not account buffers per stream)',
};

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
  actions: { name: string; triggers: Trigger[] }[];
}

export function overloadConfigOf(bootstrap: JsonObject): OverloadConfig | undefined {
  if (bootstrap.overload_manager === undefined) return undefined;
  const om = obj(bootstrap.overload_manager);
  const fixedHeap = new Map<string, number>();
  for (const m of list(om.resource_monitors)) {
    const typed = obj(m.typed_config);
    if (typeNameOfUrl(String(typed['@type'] ?? '')) === 'envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig') fixedHeap.set(String(m.name), Number(typed.max_heap_size_bytes ?? 0));
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
  return { refreshMs: typeof om.refresh_interval === 'string' ? durationMs(om.refresh_interval) : 1000, fixedHeap, actions };
}

/** The checks Envoy's OverloadManagerImpl makes when it is built, in its words, and the actions this proxy refuses. */
export function checkOverloadManager(bootstrap: JsonObject, errors: ConfigError[]): void {
  if (bootstrap.overload_manager === undefined) return;
  const om = obj(bootstrap.overload_manager);
  const monitors = new Set<string>();
  list(om.resource_monitors).forEach((m, i) => {
    const name = String(m.name ?? '');
    if (monitors.has(name)) errors.push(configError('duplicate', `overload_manager.resource_monitors[${i}].name`, `Duplicate resource monitor ${name}`));
    monitors.add(name);
  });
  const actions = new Set<string>();
  list(om.actions).forEach((a, i) => {
    const name = String(a.name ?? '');
    const path = `overload_manager.actions[${i}]`;
    if (actions.has(name)) errors.push(configError('duplicate', `${path}.name`, `Duplicate overload action ${name}`));
    actions.add(name);
    if (REFUSED_ACTIONS[name]) errors.push(configError('unsupported', `${path}.name`, `${name}: ${REFUSED_ACTIONS[name]}`));
    else if (!Object.values(ACTIONS).includes(name as never)) errors.push(configError('unsupported', `${path}.name`, `unknown overload action '${name}' (this proxy takes ${Object.values(ACTIONS).join(', ')})`));
    const triggered = new Set<string>();
    list(a.triggers).forEach((t, j) => {
      const monitor = String(t.name ?? '');
      const tPath = `${path}.triggers[${j}]`;
      if (!monitors.has(monitor)) errors.push(configError('unknown_reference', `${tPath}.name`, `Unknown trigger resource ${monitor} for overload action ${name}`));
      if (triggered.has(monitor)) errors.push(configError('duplicate', `${tPath}.name`, `Duplicate trigger resource for overload action ${name}`));
      triggered.add(monitor);
      const scaled = obj(t.scaled);
      if (t.scaled !== undefined && Number(scaled.scaling_threshold ?? 0) >= Number(scaled.saturation_threshold ?? 0)) {
        errors.push(configError('invalid', `${tPath}.scaled`, 'scaling_threshold must be less than saturation_threshold'));
      }
    });
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
