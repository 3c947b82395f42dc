/**
 * A host's health, as Envoy keeps it: a set of flags, each set by one mechanism (active health
 * checking, outlier detection, the endpoint's configured EDS status). The supervisor owns them
 * for the whole tree; workers balance over what they imply, and /clusters prints them.
 */

export const HealthFlag = {
  FAILED_ACTIVE_HC: 1 << 0,
  FAILED_OUTLIER_CHECK: 1 << 1,
  FAILED_EDS_HEALTH: 1 << 2,
  DEGRADED_ACTIVE_HC: 1 << 3,
  DEGRADED_EDS_HEALTH: 1 << 4,
  PENDING_DYNAMIC_REMOVAL: 1 << 5,
  PENDING_ACTIVE_HC: 1 << 6,
  EXCLUDED_VIA_IMMEDIATE_HC_FAIL: 1 << 7,
  ACTIVE_HC_TIMEOUT: 1 << 8,
  EDS_STATUS_DRAINING: 1 << 9,
} as const;

/** /clusters text tokens, in Envoy's order. */
const TOKENS: [number, string][] = [
  [HealthFlag.FAILED_ACTIVE_HC, 'failed_active_hc'],
  [HealthFlag.FAILED_OUTLIER_CHECK, 'failed_outlier_check'],
  [HealthFlag.FAILED_EDS_HEALTH, 'failed_eds_health'],
  [HealthFlag.DEGRADED_ACTIVE_HC, 'degraded_active_hc'],
  [HealthFlag.DEGRADED_EDS_HEALTH, 'degraded_eds_health'],
  [HealthFlag.PENDING_DYNAMIC_REMOVAL, 'pending_dynamic_removal'],
  [HealthFlag.PENDING_ACTIVE_HC, 'pending_active_hc'],
  [HealthFlag.EXCLUDED_VIA_IMMEDIATE_HC_FAIL, 'excluded_via_immediate_hc_fail'],
  [HealthFlag.ACTIVE_HC_TIMEOUT, 'active_hc_timeout'],
  [HealthFlag.EDS_STATUS_DRAINING, 'eds_status_draining'],
];

const UNHEALTHY = HealthFlag.FAILED_ACTIVE_HC | HealthFlag.FAILED_OUTLIER_CHECK | HealthFlag.FAILED_EDS_HEALTH | HealthFlag.EDS_STATUS_DRAINING;
const DEGRADED = HealthFlag.DEGRADED_ACTIVE_HC | HealthFlag.DEGRADED_EDS_HEALTH;
/** Hosts left out of load balancing and of the panic arithmetic altogether. */
const EXCLUDED = HealthFlag.PENDING_ACTIVE_HC | HealthFlag.EXCLUDED_VIA_IMMEDIATE_HC_FAIL | HealthFlag.EDS_STATUS_DRAINING;

export type CoarseHealth = 'healthy' | 'degraded' | 'unhealthy';

export function coarseHealth(flags: number): CoarseHealth {
  if (flags & UNHEALTHY) return 'unhealthy';
  if (flags & DEGRADED) return 'degraded';
  return 'healthy';
}

export function isExcluded(flags: number): boolean {
  return (flags & EXCLUDED) !== 0;
}

/** `healthy`, or `/failed_active_hc/failed_eds_health`…, as /clusters prints it. */
export function healthFlagsText(flags: number): string {
  let out = '';
  for (const [bit, token] of TOKENS) if (flags & bit) out += `/${token}`;
  return out || 'healthy';
}

/** envoy.admin.v3.HostHealthStatus as /clusters?format=json prints it (false booleans left out). */
export function healthStatusJson(flags: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (flags & HealthFlag.FAILED_ACTIVE_HC) out.failed_active_health_check = true;
  if (flags & HealthFlag.FAILED_OUTLIER_CHECK) out.failed_outlier_check = true;
  if (flags & HealthFlag.DEGRADED_ACTIVE_HC) out.failed_active_degraded_check = true;
  if (flags & HealthFlag.PENDING_DYNAMIC_REMOVAL) out.pending_dynamic_removal = true;
  if (flags & HealthFlag.PENDING_ACTIVE_HC) out.pending_active_hc = true;
  if (flags & HealthFlag.EXCLUDED_VIA_IMMEDIATE_HC_FAIL) out.excluded_via_immediate_hc_fail = true;
  if (flags & HealthFlag.ACTIVE_HC_TIMEOUT) out.active_hc_timeout = true;
  out.eds_health_status =
    flags & HealthFlag.EDS_STATUS_DRAINING ? 'DRAINING' : flags & HealthFlag.FAILED_EDS_HEALTH ? 'UNHEALTHY' : flags & HealthFlag.DEGRADED_EDS_HEALTH ? 'DEGRADED' : 'HEALTHY';
  return out;
}

/** An endpoint's configured `health_status` (envoy.config.core.v3.HealthStatus), as flags. */
export function edsHealthFlags(status: unknown): number {
  switch (status) {
    case 'UNHEALTHY':
    case 'TIMEOUT':
      return HealthFlag.FAILED_EDS_HEALTH;
    case 'DRAINING':
      // Current Envoy (exclude_host_in_eds_status_draining): excluded, not merely unhealthy.
      return HealthFlag.EDS_STATUS_DRAINING;
    case 'DEGRADED':
      return HealthFlag.DEGRADED_EDS_HEALTH;
    default:
      return 0; // UNKNOWN, HEALTHY
  }
}
