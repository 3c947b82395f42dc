import { lookup } from 'node:dns/promises';
import { Pool } from 'undici';
import { list, obj } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { durationMs } from '../../shared/config/wkt.js';
import { getLogger } from '../../shared/log/logger.js';
import { clusterStats, HostStats, type ClusterStats } from '../../shared/stats/scopes.js';
import { H2Connection } from './h2.js';
import { loadBalancerFor, type LoadBalancer } from './load-balancer.js';

/**
 * An upstream cluster as one worker sees it: its hosts (static, or resolved from DNS), its
 * load balancer, and one keep-alive connection pool per host. Everything here is per worker:
 * no request waits on another process.
 */

const log = getLogger('upstream', import.meta.url);
type Obj = JsonObject;

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
}

export class Host {
  activeRequests = 0;
  private pool: Pool | undefined;
  private h2: H2Connection | undefined;
  private readonly hostStats: HostStats;

  constructor(
    readonly cluster: Cluster,
    /** The address connections go to (an IP literal). */
    readonly ip: string,
    readonly port: number,
    readonly endpoint: EndpointConfig,
  ) {
    this.hostStats = new HostStats(cluster.name, this.address);
  }

  get weight(): number {
    return this.endpoint.weight;
  }

  /** The configured name, for DNS clusters the hostname that resolved to `ip`. */
  get hostname(): string {
    return this.endpoint.hostname;
  }

  get address(): string {
    return this.ip.includes(':') ? `[${this.ip}]:${this.port}` : `${this.ip}:${this.port}`;
  }

  get stats(): HostStats {
    return this.hostStats;
  }

  /** An upstream connection opened (or failed to): per-host and cluster figures. */
  connectionOpened(): void {
    this.stats.cxTotal.inc();
    this.stats.cxActive.inc();
    this.cluster.stats.cxTotal.inc();
    this.cluster.stats.cxActive.inc();
  }

  connectionClosed(): void {
    this.stats.cxActive.dec();
    this.cluster.stats.cxActive.dec();
  }

  connectionFailed(): void {
    this.stats.cxConnectFail.inc();
  }

  /** The keep-alive pool to this host, created on first use. */
  connectionPool(): Pool {
    if (this.pool) return this.pool;
    const pool = new Pool(`http://${this.address}`, {
      connect: { timeout: this.cluster.connectTimeoutMs },
      connections: this.cluster.maxConnections,
      keepAliveTimeout: 60_000,
      keepAliveMaxTimeout: 600_000,
      // Timeouts are the router's (route timeout, per-try timeout); undici's own defaults would cut long responses.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    pool.on('connect', () => this.connectionOpened());
    pool.on('disconnect', () => this.connectionClosed());
    pool.on('connectionError', () => this.connectionFailed());
    this.pool = pool;
    return pool;
  }

  /** The HTTP/2 session to this host (clusters that speak HTTP/2 upstream). */
  h2Connection(): H2Connection {
    this.h2 ??= new H2Connection({ authority: this.address, connectTimeoutMs: this.cluster.connectTimeoutMs }, this);
    return this.h2;
  }

  close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    this.h2?.close();
    this.h2 = undefined;
    return pool ? pool.close() : Promise.resolve();
  }
}

export const UPSTREAM_HTTP_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

/** Whether a cluster asks for HTTP/2 to its hosts (the deprecated field, or an explicit http2 config). */
export function clusterSpeaksHttp2(config: Obj): boolean {
  const options = obj(obj(config.typed_extension_protocol_options)[UPSTREAM_HTTP_OPTIONS]);
  return config.http2_protocol_options !== undefined || obj(options.explicit_http_config).http2_protocol_options !== undefined;
}

function endpointsOf(config: Obj): EndpointConfig[] {
  const out: EndpointConfig[] = [];
  for (const locality of list(obj(config.load_assignment).endpoints)) {
    const where = obj(locality.locality);
    for (const ep of list(locality.lb_endpoints)) {
      const endpoint = obj(ep.endpoint);
      const sa = obj(obj(endpoint.address).socket_address);
      const canary = obj(obj(obj(ep.metadata).filter_metadata)['envoy.lb']).canary === true;
      out.push({
        hostname: String(sa.address),
        port: Number(sa.port_value ?? 0),
        weight: Number(ep.load_balancing_weight ?? 1),
        region: String(where.region ?? ''),
        zone: String(where.zone ?? ''),
        subZone: String(where.sub_zone ?? ''),
        canary,
        configuredHostname: String(endpoint.hostname ?? ''),
      });
    }
  }
  return out;
}

/** What /clusters prints of each host, besides its figures (the membership text readout). */
export interface HostDescription {
  address: string;
  hostname: string;
  weight: number;
  region: string;
  zone: string;
  subZone: string;
  canary: boolean;
  priority: number;
}

export class Cluster {
  readonly name: string;
  readonly type: string;
  readonly connectTimeoutMs: number;
  readonly maxConnections: number;
  readonly http2: boolean;
  readonly stats: ClusterStats;
  private hostList: Host[] = [];
  private readonly balancer: LoadBalancer<Host>;
  private readonly endpoints: EndpointConfig[];
  private refreshTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(readonly config: Obj) {
    this.name = String(config.name);
    this.type = String(config.type ?? 'STATIC');
    this.connectTimeoutMs = typeof config.connect_timeout === 'string' ? durationMs(config.connect_timeout) : 5000;
    const thresholds = list(obj(config.circuit_breakers).thresholds).find((t) => (t.priority ?? 'DEFAULT') === 'DEFAULT');
    this.maxConnections = Number(thresholds?.max_connections ?? 1024);
    this.http2 = clusterSpeaksHttp2(config);
    this.stats = clusterStats(this.name);
    this.balancer = loadBalancerFor<Host>(String(config.lb_policy ?? 'ROUND_ROBIN'), obj(config.least_request_lb_config) as { choice_count?: number });
    this.endpoints = endpointsOf(config);
    if (this.type === 'STATIC') {
      this.hosts = this.endpoints.map((e) => new Host(this, e.hostname, e.port, e));
    } else {
      this.hosts = [];
    }
  }

  get hosts(): Host[] {
    return this.hostList;
  }

  /** Every change of membership updates membership_total/healthy and the host list /clusters prints. */
  set hosts(hosts: Host[]) {
    this.hostList = hosts;
    this.stats.membershipTotal.set(hosts.length);
    this.stats.membershipHealthy.set(hosts.length);
    const described: HostDescription[] = hosts.map((h) => ({
      address: h.address,
      hostname: h.endpoint.configuredHostname || (this.type === 'STATIC' ? '' : h.hostname),
      weight: h.weight,
      region: h.endpoint.region,
      zone: h.endpoint.zone,
      subZone: h.endpoint.subZone,
      canary: h.endpoint.canary,
      priority: 0,
    }));
    this.stats.membership.set(JSON.stringify(described));
  }

  /** Starts DNS resolution for STRICT_DNS and LOGICAL_DNS clusters; resolves after the first round. */
  async start(): Promise<void> {
    if (this.type === 'STATIC') return;
    await this.resolve();
    const refreshMs = typeof this.config.dns_refresh_rate === 'string' ? durationMs(this.config.dns_refresh_rate) : 5000;
    const tick = () => {
      this.refreshTimer = setTimeout(() => {
        this.resolve().finally(() => !this.closed && tick());
      }, refreshMs);
      this.refreshTimer.unref();
    };
    tick();
  }

  private async resolve(): Promise<void> {
    const family = this.config.dns_lookup_family === 'V4_ONLY' ? 4 : this.config.dns_lookup_family === 'V6_ONLY' ? 6 : 0;
    const next: Host[] = [];
    for (const e of this.endpoints) {
      try {
        const found = await lookup(e.hostname, { all: true, family, order: family === 0 && this.config.dns_lookup_family === 'V4_PREFERRED' ? 'ipv4first' : 'verbatim' });
        // LOGICAL_DNS connects to the first address only; STRICT_DNS makes a host of every address.
        const addresses = this.type === 'LOGICAL_DNS' ? found.slice(0, 1) : found;
        for (const a of addresses) {
          const existing = this.hosts.find((h) => h.ip === a.address && h.port === e.port && h.hostname === e.hostname);
          next.push(existing ?? new Host(this, a.address, e.port, e));
        }
      } catch (err) {
        log.warn(`cluster '${this.name}': DNS resolution of '${e.hostname}' failed: ${(err as Error).message}; keeping ${this.hosts.filter((h) => h.hostname === e.hostname).length} known address(es)`);
        next.push(...this.hosts.filter((h) => h.hostname === e.hostname));
      }
    }
    const gone = this.hosts.filter((h) => !next.includes(h));
    this.hosts = next;
    for (const h of gone) void h.close();
  }

  pickHost(): Host | undefined {
    return this.balancer.pick(this.hosts);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    await Promise.all(this.hosts.map((h) => h.close()));
  }
}

export class ClusterManager {
  readonly clusters = new Map<string, Cluster>();

  constructor(configs: Obj[]) {
    for (const c of configs) this.clusters.set(String(c.name), new Cluster(c));
  }

  start(): Promise<void> {
    return Promise.all([...this.clusters.values()].map((c) => c.start())).then(() => undefined);
  }

  get(name: string): Cluster | undefined {
    return this.clusters.get(name);
  }

  close(): Promise<void> {
    return Promise.all([...this.clusters.values()].map((c) => c.close())).then(() => undefined);
  }
}
