import type { ClusterResource } from '../../shared/config/resources.js';
import { clusterMatchKey, type TlsContext } from '../../shared/extensions/transport-sockets/tls/context.js';
import { UpstreamTls } from '../../shared/extensions/transport-sockets/tls/upstream.js';
import type { BreakerCounts } from '../../shared/upstream/breaker-counts.js';
import type { UpstreamHost } from '../../shared/upstream/hosts.js';
import { Cluster } from './cluster.js';

/**
 * One worker's clusters by name, as the supervisor sends them (bootstrap and CDS), with their
 * hosts and TLS contexts; a cluster replaced or removed finishes what it carries on its old object.
 */
export class ClusterManager {
  readonly clusters = new Map<string, Cluster>();

  constructor(
    resources: ClusterResource[],
    hosts: Record<string, UpstreamHost[]>,
    readonly breakers: { counts: BreakerCounts; worker: number },
    private readonly tls: Record<string, TlsContext>,
  ) {
    for (const r of resources) this.upsert(r, hosts[r.name] ?? []);
  }

  /**
   * A cluster added or changed (CDS): requests from now on use the new one; requests in flight
   * keep the cluster object they started with, whose pools close once they are done.
   */
  upsert(resource: ClusterResource, hosts: UpstreamHost[]): void {
    this.breakers.counts.assign(resource.name, resource.breakerSlot);
    const old = this.clusters.get(resource.name);
    const matchTls = resource.matchTls ?? (resource.config.transport_socket_matches ?? []).map((_, i) => this.tls[clusterMatchKey(resource.name, i)]);
    this.clusters.set(resource.name, new Cluster(resource.config, hosts, this.breakers, resource.tls ?? this.tls[resource.name], matchTls));
    void old?.close();
  }

  /**
   * The cluster's TLS context was built again (its SDS secrets came or changed): connections made
   * from now on use it; those open keep theirs, as Envoy's.
   */
  updateTls(name: string, tls: TlsContext, match?: number): void {
    const key = match === undefined ? name : clusterMatchKey(name, match);
    if (this.tls[key]) this.tls[key] = tls;
    const cluster = this.clusters.get(name);
    if (!cluster) return;
    if (match === undefined) {
      if (cluster.tls) cluster.tls = new UpstreamTls(tls, name, cluster.alpn);
    } else if (cluster.matchTls[match]) cluster.matchTls[match] = new UpstreamTls(tls, name, cluster.alpn);
  }

  /** A cluster removed: no new request finds it; those in flight finish on the old object. */
  remove(name: string): void {
    const old = this.clusters.get(name);
    this.clusters.delete(name);
    void old?.close();
  }

  get(name: string): Cluster | undefined {
    return this.clusters.get(name);
  }

  close(): Promise<void> {
    return Promise.all([...this.clusters.values()].map((c) => c.close())).then(() => undefined);
  }
}
