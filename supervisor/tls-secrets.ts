import { list, obj } from '../shared/config/access.js';
import { readDataSource } from '../shared/config/data-source.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import type { ClusterResource, ListenerResource } from '../shared/config/resources.js';
import { errorText, type ConfigError } from '../shared/config/config-error.js';
import { clusterMatchKey, listenerChainKey, loadClusterTls, loadListenerTls, parseClusterMatchKey, tlsReady, type LoadedTls, type TlsContext } from '../shared/extensions/transport-sockets/tls/context.js';
import type { SecretLookup } from '../shared/extensions/transport-sockets/tls/secrets.js';
import { sslFactoryStats } from '../shared/extensions/transport-sockets/tls/ssl-stats.js';
import type { ToWorker } from '../shared/ipc.js';
import { getLogger } from '../shared/log/logger.js';
import { listenerStatPrefix } from '../shared/stats/scopes.js';

/**
 * The TLS contexts made of secrets from SDS, across the tree: built again when one of their
 * secrets comes or changes (every one that uses it, or none: a secret one context cannot load
 * with is refused), then in force in every worker (new handshakes use them; connections open keep
 * theirs), in the health checkers, and in /certs. Each build with its secrets there counts
 * Envoy's `ssl_context_update_by_sds` of its listener or cluster.
 */

const log = getLogger('config', import.meta.url);

const usesDynamic = (c: TlsContext) => (c.secrets?.length ?? 0) > 0;

/** A listener's contexts built with their secrets from SDS, counted (by filter chain, as Envoy's socket factories). */
export function countSdsBuilds(resource: ListenerResource): void {
  for (const context of Object.values(resource.tls)) {
    if (usesDynamic(context) && tlsReady(context)) sslFactoryStats(listenerStatPrefix(resource.address, resource.config.stat_prefix as string | undefined), 'downstream').updateBySds.inc();
  }
}

export function countClusterSdsBuild(name: string, context: TlsContext): void {
  if (usesDynamic(context) && tlsReady(context)) sslFactoryStats(`cluster.${name}.`, 'upstream').updateBySds.inc();
}

/** What the contexts live in. */
export interface TlsHolders {
  bootstrap: JsonObject;
  /** The bootstrap's contexts (static clusters' are read from here by workers started later). */
  loaded: LoadedTls;
  listeners: () => { active: ListenerResource[]; warming: ListenerResource[] };
  clusters: () => { active: ClusterResource[]; warming: ClusterResource[] };
  /** A cluster's health checks connect with its new context (the serving membership, or the warming one). */
  checksUse: (cluster: string, warming: boolean, tls: TlsContext, match?: number) => void;
  toEveryWorker: (m: ToWorker) => void;
  report: () => void;
}

interface Rebuilt {
  /** A listener, its contexts built again, whether it warms, and the chains whose contexts the secret changed. */
  listeners: [ListenerResource, ListenerResource['tls'], boolean, string[]][];
  /** A bootstrap cluster's context (its own, or with `match` a transport_socket_matches entry's) built again. */
  staticClusters: [string, TlsContext, number | undefined][];
  clusters: [ClusterResource, TlsContext, boolean, number | undefined][];
}

export class TlsSecrets {
  constructor(
    private readonly holders: TlsHolders,
    private readonly lookup: SecretLookup,
  ) {}

  /** The contexts using the secret of `key`, built again with its new value; the errors of those that do not load (none: in force). */
  changed(key: string): string[] {
    return this.rebuild((c) => c.secrets?.includes(key) === true, () => true, true);
  }

  /**
   * Contexts still waiting for secrets, built again: those loaded before their secrets' provider
   * had them (the bootstrap's first reading; an update whose secrets came meanwhile).
   */
  refreshWaiting(): void {
    // Loaded again, each makes its providers ask for its secrets; only one that is ready now changes.
    const errors = this.rebuild((c) => (c.notReady?.length ?? 0) > 0, tlsReady, false);
    if (errors.length) log.warn(`sds: ${errors.join('; ')}`);
  }

  /** Every secret key the contexts use now (the others are dropped). */
  used(): Set<string> {
    const { active, warming } = this.holders.listeners();
    const clusters = this.holders.clusters();
    const contexts = [
      ...[...active, ...warming].flatMap((l) => Object.values(l.tls)),
      ...Object.values(this.holders.loaded.clusters),
      ...[...clusters.active, ...clusters.warming].flatMap((c) => [c.tls, ...(c.matchTls ?? [])].filter((t): t is TlsContext => !!t)),
    ];
    return new Set(contexts.flatMap((c) => c.secrets ?? []));
  }

  /** `select`: the contexts to build again; `keep`: those of them that change; `refuse`: one that does not load refuses them all. */
  private rebuild(select: (c: TlsContext) => boolean, keep: (c: TlsContext) => boolean, refuse: boolean): string[] {
    const errors: string[] = [];
    const out: Rebuilt = { listeners: [], staticClusters: [], clusters: [] };
    const collect = (label: string, load: (errs: ConfigError[]) => unknown) => {
      const errs: ConfigError[] = [];
      const loaded = load(errs);
      if (errs.length) errors.push(`${label}: ${errorText(errs)}`);
      return errs.length ? undefined : loaded;
    };
    const { active, warming } = this.holders.listeners();
    for (const [resources, isWarming] of [[active, false], [warming, true]] as const) {
      for (const r of resources) {
        const chains = Object.entries(r.tls).filter(([, c]) => select(c)).map(([chain]) => chain);
        if (chains.length === 0) continue;
        const tls = collect(`listener '${r.name}'`, (errs) => loadListenerTls(r.config, 'listener', readDataSource, errs, this.lookup)) as ListenerResource['tls'] | undefined;
        const changedChains = chains.filter((chain) => tls?.[chain] && keep(tls[chain]));
        if (tls && changedChains.length) out.listeners.push([r, tls, isWarming, changedChains]);
      }
    }
    const staticConfigs = new Map(list(obj(this.holders.bootstrap.static_resources).clusters).map((c, i) => [String(c.name), [c, i] as const]));
    for (const [key, context] of Object.entries(this.holders.loaded.clusters)) {
      if (!select(context)) continue;
      const { cluster: name, match } = parseClusterMatchKey(key) ?? { cluster: key, match: undefined };
      const [config, i] = staticConfigs.get(name)!;
      const tls = collect(`cluster '${name}'`, (errs) => loadClusterTls(config, `static_resources.clusters[${i}]`, readDataSource, errs, this.lookup, match)) as TlsContext | undefined;
      if (tls && keep(tls)) out.staticClusters.push([name, tls, match]);
    }
    const clusters = this.holders.clusters();
    for (const [resources, isWarming] of [[clusters.active, false], [clusters.warming, true]] as const) {
      for (const r of resources) {
        // The cluster's own context, then each transport_socket_matches entry's.
        for (const [context, match] of [[r.tls, undefined], ...(r.matchTls ?? []).map((m, j) => [m, j] as const)] as const) {
          if (!context || !select(context)) continue;
          const tls = collect(`cluster '${r.name}'`, (errs) => loadClusterTls(r.config, '', readDataSource, errs, this.lookup, match)) as TlsContext | undefined;
          if (tls && keep(tls)) out.clusters.push([r, tls, isWarming, match]);
        }
      }
    }
    if (refuse && errors.length) return errors;
    this.apply(out);
    return errors;
  }

  private apply(out: Rebuilt): void {
    const message: Extract<ToWorker, { type: 'tls_update' }> = { type: 'tls_update', listeners: [], clusters: [] };
    for (const [r, tls, isWarming, chains] of out.listeners) {
      r.tls = tls;
      const counters = sslFactoryStats(listenerStatPrefix(r.address, r.config.stat_prefix as string | undefined), 'downstream');
      for (const chain of chains) if (tlsReady(tls[chain]!)) counters.updateBySds.inc();
      if (!r.addedViaApi) for (const [chain, context] of Object.entries(tls)) this.holders.loaded.listeners[listenerChainKey(r.name, chain)] = context;
      if (!isWarming) message.listeners.push({ name: r.name, tls });
    }
    for (const [name, tls, match] of out.staticClusters) {
      this.holders.loaded.clusters[match === undefined ? name : clusterMatchKey(name, match)] = tls;
      countClusterSdsBuild(name, tls);
      this.holders.checksUse(name, false, tls, match);
      message.clusters.push({ name, tls, ...(match === undefined ? {} : { match }) });
    }
    for (const [r, tls, isWarming, match] of out.clusters) {
      if (match === undefined) r.tls = tls;
      else r.matchTls![match] = tls;
      countClusterSdsBuild(r.name, tls);
      this.holders.checksUse(r.name, isWarming, tls, match);
      if (!isWarming) message.clusters.push({ name: r.name, tls, ...(match === undefined ? {} : { match }) });
    }
    if (message.listeners.length || message.clusters.length) this.holders.toEveryWorker(message);
    if (out.listeners.length || out.staticClusters.length || out.clusters.length) this.holders.report();
  }
}
