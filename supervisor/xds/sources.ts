import { obj } from '../../shared/config/access.js';
import { parseDisabledExtensions } from '../../shared/config/extensions.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { getLogger } from '../../shared/log/logger.js';
import type { ClusterChanges, ClusterManager, DynamicFieldPolicy } from '../cluster-manager.js';
import type { Options } from '../options.js';
import { FileSubscription, pathSourceOf } from './file-subscription.js';

/**
 * The bootstrap's `dynamic_resources`, as subscriptions feeding the supervisor's managers. Today:
 * the cluster discovery service from a file (`cds_config.path_config_source`). The bootstrap
 * loader refuses every other source by name.
 */

const log = getLogger('config', import.meta.url);

export class ConfigSources {
  private readonly subscriptions: FileSubscription[] = [];
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

  /** Reads every file source now (so the first tree starts with their resources), then watches them. */
  start(): void {
    const cds = pathSourceOf(obj(obj(this.bootstrap.dynamic_resources).cds_config));
    if (cds) {
      log.info(`cds: reading clusters from ${cds.path}${cds.watchedDirectory ? ` (watching ${cds.watchedDirectory})` : ''}`);
      const subscription = new FileSubscription(cds, 'cluster_manager.cds.', (versionInfo, resources) => {
        const changes = this.clusters.applyCds(versionInfo, resources, this.policy);
        this.applyClusters(changes);
        return changes.rejected;
      });
      this.subscriptions.push(subscription);
      subscription.start();
    }
  }

  close(): void {
    for (const s of this.subscriptions) s.close();
  }
}
