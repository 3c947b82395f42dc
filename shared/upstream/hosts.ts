import { formatAddress } from '../address.js';
import type { envoy } from '../config/envoy-types.js';
import { edsHealthFlags, HealthFlag } from './health.js';
import { transportSocketMatch } from './transport-socket-match.js';
import { hostTlvsOf, type HostTlv } from '../extensions/transport-sockets/proxy-protocol/upstream-proxy-protocol.js';

/**
 * Upstream hosts as the whole tree sees them. The supervisor resolves each cluster's endpoints
 * (STATIC as configured; STRICT_DNS and LOGICAL_DNS through DNS), keeps their health flags and
 * sends the list to every worker; /clusters and /config_dump print it.
 */

/** One configured endpoint (lb_endpoint), before DNS. */
export interface EndpointConfig {
  /** Host name or IP literal as configured. */
  hostname: string;
  port: number;
  weight: number;
  region: string;
  zone: string;
  subZone: string;
  canary: boolean;
  /** endpoint.hostname, when configured. */
  configuredHostname: string;
  /** The configured health_status (envoy.config.core.v3.HealthStatus name), UNKNOWN by default. */
  edsHealthStatus: string;
  /** Its LocalityLbEndpoints' priority (0 is the highest) and load_balancing_weight (0: none). */
  priority: number;
  localityWeight: number;
  /** The assignment's policy.overprovisioning_factor, in percent (140 by default). */
  overprovisioningFactor: number;
  /** health_check_config: the port and address health checks use instead of the host's own (0 / '': the host's). */
  healthCheckPort: number;
  healthCheckAddress: string;
  /** Which of the cluster's transport_socket_matches its connections use (-1: the cluster's transport_socket). */
  transportSocketMatch: number;
  /** Its own PROXY protocol TLVs (metadata PerHostConfig), when it has any. */
  proxyTlvs?: HostTlv[];
}

export interface UpstreamHost {
  /** `ip:port` or `[ip]:port`: the host's identity, in stats names and /clusters. */
  address: string;
  ip: string;
  port: number;
  /** The configured name or IP (for DNS clusters, the name that resolved to `ip`). */
  hostname: string;
  /** What /clusters prints as hostname: endpoint.hostname, or for DNS clusters the resolved name. */
  displayHostname: string;
  weight: number;
  region: string;
  zone: string;
  subZone: string;
  canary: boolean;
  priority: number;
  /** The locality's load_balancing_weight (locality-weighted load balancing; 0: none). */
  localityWeight: number;
  overprovisioningFactor: number;
  /** Where active health checks go: health_check_config's port and address, else the host's. */
  healthCheckIp: string;
  healthCheckPort: number;
  edsHealthStatus: string;
  /** HealthFlag bits. */
  healthFlags: number;
  /** Which of the cluster's transport_socket_matches its connections (and health checks) use; -1: the cluster's transport_socket. */
  transportSocketMatch: number;
  /** Its own TLVs for an upstream_proxy_protocol transport socket's version 2 headers, when it has any. */
  proxyTlvs?: HostTlv[];
}

/** ClusterLoadAssignment.policy.overprovisioning_factor's default: 140 %. */
const DEFAULT_OVERPROVISIONING = 140;

/** A cluster's configured endpoints (its load_assignment: static, or the latest from EDS). */
export function endpointsOf(config: Pick<envoy.config.cluster.v3.Cluster, 'load_assignment' | 'transport_socket_matches'>): EndpointConfig[] {
  const out: EndpointConfig[] = [];
  const assignment = config.load_assignment ?? {};
  const overprovisioningFactor = assignment.policy?.overprovisioning_factor ?? DEFAULT_OVERPROVISIONING;
  for (const locality of assignment.endpoints ?? []) {
    const where = locality.locality ?? {};
    for (const ep of locality.lb_endpoints ?? []) {
      const endpoint = ep.endpoint ?? {};
      const sa = endpoint.address?.socket_address ?? {};
      const hc = endpoint.health_check_config ?? {};
      const canary = ep.metadata?.filter_metadata?.['envoy.lb']?.canary === true;
      const proxyTlvs = hostTlvsOf(ep.metadata);
      out.push({
        hostname: String(sa.address),
        port: sa.port_value ?? 0,
        weight: ep.load_balancing_weight ?? 1,
        region: where.region ?? '',
        zone: where.zone ?? '',
        subZone: where.sub_zone ?? '',
        canary,
        configuredHostname: endpoint.hostname ?? '',
        edsHealthStatus: ep.health_status ?? 'UNKNOWN',
        priority: locality.priority ?? 0,
        localityWeight: locality.load_balancing_weight ?? 0,
        overprovisioningFactor,
        healthCheckPort: hc.port_value ?? 0,
        healthCheckAddress: hc.address?.socket_address?.address ?? '',
        transportSocketMatch: transportSocketMatch(config.transport_socket_matches, ep.metadata, locality.metadata),
        ...(proxyTlvs ? { proxyTlvs } : {}),
      });
    }
  }
  return out;
}

/** A host for endpoint `e` at `ip` (STATIC: the configured IP; DNS: one resolved address). */
export function upstreamHost(e: EndpointConfig, ip: string, dns: boolean, extraFlags = 0): UpstreamHost {
  return {
    address: formatAddress(ip, e.port),
    ip,
    port: e.port,
    hostname: e.hostname,
    displayHostname: e.configuredHostname || (dns ? e.hostname : ''),
    weight: e.weight,
    region: e.region,
    zone: e.zone,
    subZone: e.subZone,
    canary: e.canary,
    priority: e.priority,
    localityWeight: e.localityWeight,
    overprovisioningFactor: e.overprovisioningFactor,
    healthCheckIp: e.healthCheckAddress || ip,
    healthCheckPort: e.healthCheckPort || e.port,
    edsHealthStatus: e.edsHealthStatus,
    healthFlags: edsHealthFlags(e.edsHealthStatus) | extraFlags,
    transportSocketMatch: e.transportSocketMatch,
    ...(e.proxyTlvs ? { proxyTlvs: e.proxyTlvs } : {}),
  };
}

/** envoy.config.core.v3.HealthStatus of a host, as Envoy's config dump reports it. */
export function hostHealthStatus(h: UpstreamHost): string {
  if (h.healthFlags & (HealthFlag.FAILED_ACTIVE_HC | HealthFlag.FAILED_OUTLIER_CHECK)) return 'UNHEALTHY';
  if (['UNHEALTHY', 'DRAINING', 'TIMEOUT'].includes(h.edsHealthStatus)) return h.edsHealthStatus;
  if (h.healthFlags & HealthFlag.DEGRADED_ACTIVE_HC) return 'DEGRADED';
  return h.edsHealthStatus === 'UNKNOWN' ? 'HEALTHY' : h.edsHealthStatus;
}
