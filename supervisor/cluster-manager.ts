import type { Extension } from '../shared/extensions/registry.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { bootstrapClusterConfigs, type ClusterResource, type UpdateFailure } from '../shared/config/resources.js';
import { checkResource, CLUSTER_TYPE, type UnknownDynamicFields } from '../shared/config/xds-resource.js';
import { sameResource } from '../shared/config/resource-hash.js';
import { readDataSource } from '../shared/config/data-source.js';
import { getLogger } from '../shared/log/logger.js';
import { loadClusterMatchTls, loadClusterTls } from '../shared/extensions/transport-sockets/tls/context.js';
import { StaticSecrets, type SecretLookup } from '../shared/extensions/transport-sockets/tls/secrets.js';
import { countClusterSdsBuild } from './tls-secrets.js';
import { stats } from '../shared/stats/process.js';
import { CLUSTER_CAPACITY, LISTENER_CAPACITY } from '../shared/upstream/breaker-counts.js';
import { presentAtZero } from '../shared/stats/always-present.js';
import { errorText, type ConfigError } from '../shared/config/config-error.js';
import type { Cluster as ClusterConfig } from '../shared/config/envoy-types.js';

const log = getLogger('upstream', import.meta.url);

/** What one discovery update changed. */
export interface ClusterChanges {
  /** Added or modified, in the update's order, serving now. */
  upserted: ClusterResource[];
  /** Added or modified once the workers serve: each warms (its first endpoints, DNS answer, health-check round) before it serves. */
  warming: ClusterResource[];
  /** Active clusters removed; a warming version of a removed name is dropped too. */
  removed: string[];
  /** Each refused resource's name (if it had one) and errors; its earlier version, if any, stays. */
  rejected: string[];
}

export interface DynamicFieldPolicy {
  unknownFields: UnknownDynamicFields;
  disabledExtensions: Set<Extension>;
  /** What only the sources can tell about a cluster (an EDS source this proxy cannot reach). */
  checkSources?: (cluster: JsonObject) => ConfigError[];
}

/**
 * The tree's clusters, owned by the supervisor as Envoy's main thread owns them: each with its
 * configuration, source and version. The bootstrap is the first source; every consumer — the
 * membership and health checking here, the workers' pools and load balancers, the admin's
 * /clusters and /config_dump — reads the clusters from here (through the context), never from
 * static_resources.
 */
export class ClusterManager {
  private readonly byName = new Map<string, ClusterResource>();
  /** New versions warming before they serve (Envoy's warming clusters). */
  private readonly warmingByName = new Map<string, ClusterResource>();
  /** Set once the workers serve: from then on a new or changed cluster warms first. */
  warmingEnabled = false;
  /** The secrets clusters' TLS contexts name (set by the tree: the bootstrap's, and SDS's). */
  secrets: SecretLookup = new StaticSecrets({}, []);
  /** Each name's circuit-breaker slot, for the tree's life. */
  private readonly slots = new Map<string, number>();
  private readonly added = stats.counter('cluster_manager.cluster_added');
  private readonly modified = stats.counter('cluster_manager.cluster_modified');
  private readonly removed = stats.counter('cluster_manager.cluster_removed');
  private readonly dynamicUnknownFields = stats.counter('server.dynamic_unknown_fields');
  private readonly warnedUnknown = new Set<string>();
  /** The version of the last CDS update accepted whole (/config_dump's version_info). */
  cdsVersionInfo: string | undefined;
  /** Each refused cluster's last refusal, until a later version of it is accepted (or it leaves the update). */
  private readonly failures = new Map<string, UpdateFailure>();

  /** The refusals the admin shows as error_state. */
  get updateFailures(): UpdateFailure[] {
    return [...this.failures.values()];
  }
  // Envoy's NeverImport gauges: a hot-restart parent's count is not added to the child's.
  private readonly active = stats.gauge('cluster_manager.active_clusters', 'local');
  private readonly warmingGauge = stats.gauge('cluster_manager.warming_clusters', 'local');

  constructor(bootstrap: JsonObject, loadedAtMs: number) {
    presentAtZero('clusterManager', 'cluster_manager.');
    for (const config of bootstrapClusterConfigs(bootstrap)) {
      const name = String(config.name);
      this.byName.set(name, { name, config, addedViaApi: false, lastUpdatedMs: loadedAtMs, breakerSlot: this.slotFor(name) });
    }
    this.added.inc(this.byName.size);
    this.refreshGauges();
  }

  /** The versions warming now. */
  get warming(): ClusterResource[] {
    return [...this.warmingByName.values()];
  }

  /** A warming cluster is warm: it serves from now on, in place of the version that served. */
  promote(name: string): ClusterResource | undefined {
    const resource = this.warmingByName.get(name);
    if (!resource) return undefined;
    this.warmingByName.delete(name);
    this.byName.set(name, resource);
    this.refreshGauges();
    return resource;
  }

  private refreshGauges(): void {
    this.active.set(this.byName.size);
    this.warmingGauge.set(this.warmingByName.size);
  }

  /** Every active cluster, in the order they were added. */
  get clusters(): ClusterResource[] {
    return [...this.byName.values()];
  }

  get configs(): ClusterConfig[] {
    return this.clusters.map((c) => c.config);
  }

  /**
   * A CDS update: the full set of dynamic clusters (state of the world). Each resource is checked
   * alone; a valid new or changed one replaces its earlier version, an identical one is skipped,
   * a refused one keeps its earlier version, and dynamic clusters the update does not name are
   * removed. Bootstrap clusters cannot be changed this way.
   */
  applyCds(versionInfo: string, resources: JsonObject[], policy: DynamicFieldPolicy, nowMs = Date.now()): ClusterChanges {
    const changes: ClusterChanges = { upserted: [], warming: [], removed: [], rejected: [] };
    const named = new Set<string>();
    for (const [i, any] of resources.entries()) {
      const checked = checkResource(CLUSTER_TYPE, any, policy.unknownFields, policy.disabledExtensions);
      const label = checked.name ?? `resources[${i}]`;
      for (const field of checked.unknownFields) {
        this.dynamicUnknownFields.inc();
        if (!this.warnedUnknown.has(field)) log.warn(`cds: unknown field ${field} in cluster '${label}' ignored`);
        this.warnedUnknown.add(field);
      }
      if (checked.name !== undefined && named.has(checked.name)) {
        changes.rejected.push(`cluster '${label}': duplicate in the same update`);
        continue;
      }
      if (checked.name !== undefined) named.add(checked.name);
      const errors = checked.message ? (policy.checkSources?.(checked.message) ?? []) : checked.errors;
      const tls = checked.message && errors.length === 0 ? loadClusterTls(checked.message, '', readDataSource, errors, this.secrets) : undefined;
      const matchTls = checked.message && errors.length === 0 ? loadClusterMatchTls(checked.message, '', readDataSource, errors, this.secrets) : [];
      if (!checked.message || errors.length) {
        changes.rejected.push(`cluster '${label}': ${errorText(errors)}`);
        if (checked.name !== undefined) this.failures.set(checked.name, { name: checked.name, lastUpdateAttemptMs: nowMs, details: errorText(errors), versionInfo });
        continue;
      }
      this.failures.delete(String(checked.message.name));
      const name = String(checked.message.name);
      const current = this.byName.get(name);
      if (current && !current.addedViaApi) {
        changes.rejected.push(`cluster '${name}': a cluster of static_resources cannot be changed by the cluster discovery service`);
        continue;
      }
      const same = (r: ClusterResource | undefined) => r !== undefined && sameResource(r.config, checked.message!);
      const warming = this.warmingByName.get(name);
      if (same(warming)) continue;
      if (same(current)) {
        // Back to the version that serves: the one warming is dropped.
        if (warming) {
          this.warmingByName.delete(name);
          this.modified.inc();
        }
        continue;
      }
      const resource: ClusterResource = { name, config: checked.message, addedViaApi: true, versionInfo, lastUpdatedMs: nowMs, breakerSlot: this.slotFor(name), ...(tls ? { tls } : {}), ...(matchTls.length ? { matchTls } : {}) };
      (current || warming ? this.modified : this.added).inc();
      if (tls) countClusterSdsBuild(name, tls);
      for (const m of matchTls) if (m) countClusterSdsBuild(name, m);
      if (this.warmingEnabled) {
        this.warmingByName.set(name, resource);
        changes.warming.push(resource);
        continue;
      }
      this.byName.set(name, resource);
      changes.upserted.push(resource);
    }
    for (const name of this.failures.keys()) if (!named.has(name)) this.failures.delete(name);
    for (const [name, c] of this.byName) {
      if (!c.addedViaApi || named.has(name)) continue;
      this.byName.delete(name);
      this.removed.inc();
      changes.removed.push(name);
    }
    for (const name of this.warmingByName.keys()) if (!named.has(name)) this.warmingByName.delete(name);
    this.refreshGauges();
    if (changes.rejected.length === 0) this.cdsVersionInfo = versionInfo;
    return changes;
  }

  private slotFor(name: string): number {
    let slot = this.slots.get(name);
    if (slot === undefined) {
      if (this.slots.size >= CLUSTER_CAPACITY - LISTENER_CAPACITY) throw new Error(`more than ${CLUSTER_CAPACITY - LISTENER_CAPACITY} cluster names over the tree's life: no circuit-breaker slot for '${name}'`);
      slot = this.slots.size;
      this.slots.set(name, slot);
    }
    return slot;
  }
}
