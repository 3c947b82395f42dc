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

/** Envoy's getInteger(key, default): the runtime's unsigned integer under `key`, else the default. */
export function runtimeInteger(key: string, defaultValue: number): number {
  const raw = runtimeValue(key);
  return raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : defaultValue;
}

/** Envoy's featureEnabled(key, default): the runtime's integer percentage under `key` (else `defaultPercent`) of requests. */
export function featureEnabled(key: string, defaultPercent: number): boolean {
  const raw = runtimeValue(key);
  const v = Number(raw);
  const percent = raw !== undefined && Number.isFinite(v) ? v : defaultPercent;
  return percent >= 100 || Math.random() * 100 < percent;
}

const FRACTION_DENOMINATORS: Record<string, number> = { HUNDRED: 100, TEN_THOUSAND: 10_000, MILLION: 1_000_000 };

/**
 * What a tool that explains a request fixes, where a worker draws at random: Envoy's per-stream
 * random value (routes' runtime_fraction and weighted clusters read it), and, for
 * `proxy route-check` as Envoy's router_check_tool, which runtime keys are on.
 */
export interface FractionDraw {
  random?: bigint;
  /** When set, a runtime_fraction whose key this refuses is off (router_check_tool enables only the test's key). */
  runtimeKeyOn?: (key: string | undefined) => boolean;
}

/**
 * A RuntimeFractionalPercent (`default_value` a FractionalPercent, `runtime_key` its override, a
 * numerator over the same denominator): whether this request falls in the share. With a fixed
 * random value, as Envoy's evaluateFractionalPercent: `random % denominator < numerator`.
 */
export function compileRuntimeFraction(rf: { default_value?: unknown; runtime_key?: unknown }): (draw?: FractionDraw) => boolean {
  const pct = (rf.default_value ?? {}) as { numerator?: number; denominator?: string };
  const denominator = FRACTION_DENOMINATORS[String(pct.denominator ?? 'HUNDRED')] ?? 100;
  const key = typeof rf.runtime_key === 'string' ? rf.runtime_key : undefined;
  const defaultNumerator = Number(pct.numerator ?? 0);
  return (draw) => {
    const configured = key !== undefined ? Number(runtimeValue(key)) : NaN;
    const numerator = Number.isFinite(configured) ? configured : defaultNumerator;
    if (draw?.runtimeKeyOn && !draw.runtimeKeyOn(key)) return false;
    if (draw?.random !== undefined) return Number(draw.random % BigInt(denominator)) < numerator;
    return Math.floor(Math.random() * denominator) < numerator;
  };
}
