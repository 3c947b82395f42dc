import { list, obj } from '../../shared/config/access.js';
import { parseDisabledExtensions } from '../../shared/config/extensions.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { durationMs } from '../../shared/config/wkt.js';
import { CLUSTER_TYPE } from '../../shared/config/xds-resource.js';
import { getLogger } from '../../shared/log/logger.js';
import type { ClusterChanges, ClusterManager, DynamicFieldPolicy } from '../cluster-manager.js';
import type { Options } from '../options.js';
import { FileSubscription, pathSourceOf } from './file-subscription.js';
import { ADS_METHOD, CDS_METHOD, GrpcXdsStream } from './grpc-stream.js';
import { SubscriptionStats } from './subscription-stats.js';

/**
 * The bootstrap's `dynamic_resources`, as subscriptions feeding the supervisor's managers. Today:
 * the cluster discovery service, from a file (`path_config_source`) or from a control plane over
 * gRPC (`api_config_source` with api_type GRPC, or `ads` over `ads_config`). The bootstrap
 * loader refuses every other source by name.
 */

const log = getLogger('config', import.meta.url);
/** Envoy's initial_fetch_timeout default. */
const INITIAL_FETCH_TIMEOUT_MS = 15_000;

/** `ip:port` of the first host of a static cluster (the xDS cluster a gRPC source names). */
function clusterTarget(bootstrap: JsonObject, name: string): string {
  const cluster = list(obj(bootstrap.static_resources).clusters).find((c) => c.name === name);
  const endpoint = list(list(obj(obj(cluster).load_assignment).endpoints)[0]?.lb_endpoints)[0];
  const address = obj(obj(obj(obj(endpoint).endpoint).address).socket_address);
  const host = String(address.address ?? '');
  return `${host.includes(':') ? `[${host}]` : host}:${Number(address.port_value ?? 0)}`;
}

export class ConfigSources {
  private readonly files: FileSubscription[] = [];
  private readonly streams: GrpcXdsStream[] = [];
  private ads: GrpcXdsStream | undefined;
  private readonly policy: DynamicFieldPolicy;

  constructor(
    private readonly bootstrap: JsonObject,
    options: Options,
    private readonly clusters: ClusterManager,
    /** Applies a cluster update to the tree (membership, breakers, workers, admin). */
    private readonly applyClusters: (changes: ClusterChanges) => void,
  ) {
    this.policy = {
      unknownFields: options.rejectUnknownDynamicFields ? 'reject' : options.ignoreUnknownDynamicFields ? 'ignore' : 'warn',
      disabledExtensions: parseDisabledExtensions(options.disableExtensions, () => undefined),
    };
  }

  /**
   * Starts every source; resolves once each has had its initial fetch (a file: at once; a control
   * plane: its first response, or initial_fetch_timeout), so the workers start with it, as Envoy's
   * init waits for CDS.
   */
  start(): Promise<void> {
    const cdsConfig = obj(obj(this.bootstrap.dynamic_resources).cds_config);
    if (Object.keys(cdsConfig).length === 0) return Promise.resolve();
    const cdsStats = new SubscriptionStats('cluster_manager.cds.');
    const applyCds = (versionInfo: string, resources: JsonObject[]) => {
      const changes = this.clusters.applyCds(versionInfo, resources, this.policy);
      this.applyClusters(changes);
      return changes.rejected;
    };
    const file = pathSourceOf(cdsConfig);
    if (file) {
      log.info(`cds: reading clusters from ${file.path}${file.watchedDirectory ? ` (watching ${file.watchedDirectory})` : ''}`);
      const subscription = new FileSubscription(file, cdsStats, applyCds);
      this.files.push(subscription);
      subscription.start();
      return Promise.resolve();
    }
    const stream = cdsConfig.ads !== undefined ? this.adsStream() : this.stream(obj(cdsConfig.api_config_source), CDS_METHOD);
    const timeoutMs = typeof cdsConfig.initial_fetch_timeout === 'string' ? durationMs(cdsConfig.initial_fetch_timeout) : INITIAL_FETCH_TIMEOUT_MS;
    return new Promise((resolve) => {
      const timer = timeoutMs > 0 ? setTimeout(() => {
        cdsStats.initialFetchTimedOut();
        log.warn(`cds: no response from the control plane within the initial fetch timeout (${timeoutMs} ms); starting without its clusters`);
        resolve();
      }, timeoutMs) : undefined;
      const counted = (versionInfo: string, resources: JsonObject[]) => cdsStats.update(versionInfo, () => applyCds(versionInfo, resources));
      stream.subscribe(`type.googleapis.com/${CLUSTER_TYPE}`, counted, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** A per-type stream to `api_config_source`'s control plane. */
  private stream(api: JsonObject, method: string): GrpcXdsStream {
    const cluster = String(obj(obj(list(api.grpc_services)[0]).envoy_grpc).cluster_name);
    const stream = new GrpcXdsStream(clusterTarget(this.bootstrap, cluster), method, obj(this.bootstrap.node), api.set_node_on_first_message_only === true);
    this.streams.push(stream);
    return stream;
  }

  /** The one aggregated stream (ADS) that every `ads: {}` source shares, as Envoy opens one per instance. */
  private adsStream(): GrpcXdsStream {
    return (this.ads ??= this.stream(obj(obj(this.bootstrap.dynamic_resources).ads_config), ADS_METHOD));
  }

  close(): void {
    for (const f of this.files) f.close();
    for (const s of this.streams) s.close();
  }
}
