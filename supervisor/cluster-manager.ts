import type { JsonObject } from '../shared/config/proto-json.js';
import { bootstrapClusters, type ClusterResource } from '../shared/config/resources.js';
import { stats } from '../shared/stats/process.js';

/**
 * The tree's clusters, owned by the supervisor as Envoy's main thread owns them: each with its
 * configuration, source and version. The bootstrap is the first source; every consumer — the
 * membership and health checking here, the workers' pools and load balancers, the admin's
 * /clusters and /config_dump — reads the clusters from here (through the context), never from
 * static_resources.
 */
export class ClusterManager {
  private readonly byName = new Map<string, ClusterResource>();
  private readonly added = stats.counter('cluster_manager.cluster_added');
  // Envoy's NeverImport gauges: a hot-restart parent's count is not added to the child's.
  private readonly active = stats.gauge('cluster_manager.active_clusters', 'local');

  constructor(bootstrap: JsonObject, loadedAtMs: number) {
    for (const c of bootstrapClusters(bootstrap, loadedAtMs)) this.byName.set(c.name, c);
    this.added.inc(this.byName.size);
    this.active.set(this.byName.size);
  }

  /** Every active cluster, in the order they were added. */
  get clusters(): ClusterResource[] {
    return [...this.byName.values()];
  }

  get configs(): JsonObject[] {
    return this.clusters.map((c) => c.config);
  }
}
