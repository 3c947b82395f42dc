/**
 * Runtime values as every process sees them: a snapshot of the supervisor's layers (static,
 * disk, admin), re-sent whenever a layer changes, so a read is a map lookup in the process's own
 * memory. Values are the raw strings written in the layers; the last layer that has a key wins.
 */

export interface RuntimeSnapshot {
  /** Layer names, in order. */
  layers: string[];
  /** For each key, one value per layer ('' where the layer does not have it). */
  entries: Record<string, string[]>;
}

export const EMPTY_RUNTIME: RuntimeSnapshot = { layers: [], entries: {} };

/** The value of the last layer that sets the key (Envoy's final_value), or undefined. */
export function finalValue(layerValues: string[]): string | undefined {
  for (let i = layerValues.length - 1; i >= 0; i--) if (layerValues[i] !== '') return layerValues[i];
  return undefined;
}

let current: RuntimeSnapshot = EMPTY_RUNTIME;

export function setRuntime(snapshot: RuntimeSnapshot): void {
  current = snapshot;
}

export function runtimeSnapshot(): RuntimeSnapshot {
  return current;
}

export function runtimeValue(key: string): string | undefined {
  const values = current.entries[key];
  return values ? finalValue(values) : undefined;
}

/** A `proxy.reloadable_features.*` style flag: "true"/"false" in any layer, else the default. */
export function runtimeFeature(key: string, defaultValue: boolean): boolean {
  const v = runtimeValue(key);
  if (v === 'true') return true;
  if (v === 'false') return false;
  return defaultValue;
}
