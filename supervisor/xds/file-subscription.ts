import { existsSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { BootstrapError, readSource } from '../../shared/config/bootstrap.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { envoySchema } from '../../shared/config/schema.js';
import { getLogger } from '../../shared/log/logger.js';
import { stats } from '../../shared/stats/process.js';

/**
 * File-based xDS (`path_config_source`, or the legacy `path`), with Envoy's semantics: the file is
 * one DiscoveryResponse (format by extension: .pb, .pb_text, .yaml/.yml, else JSON), read once at
 * start, and read again only when a file is renamed onto the path — write a temporary file beside
 * it and `mv` it there; a write in place is never picked up half-written. With
 * `watched_directory`, any rename into that directory reloads the path (Kubernetes ConfigMaps
 * swap a `..data` symlink). A file that cannot be read or parsed changes nothing
 * (`update_failure`); one whose resources are refused is `update_rejected`, and its valid
 * resources still apply, as Envoy's CDS applies them.
 *
 * Node's watcher reports renames and creations alike, so a file deleted and created anew at the
 * path is also read again (Envoy waits for a rename).
 */

const log = getLogger('config', import.meta.url);
const DISCOVERY_RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';

export interface PathSource {
  path: string;
  watchedDirectory?: string;
}

/** What a subscriber does with an update: the errors of the resources it refused (none: accepted). */
export type ApplyUpdate = (versionInfo: string, resources: JsonObject[]) => string[];

export function pathSourceOf(configSource: JsonObject): PathSource | undefined {
  const pcs = configSource.path_config_source as JsonObject | undefined;
  if (pcs && typeof pcs.path === 'string') {
    const watched = (pcs.watched_directory as JsonObject | undefined)?.path;
    return { path: pcs.path, ...(typeof watched === 'string' ? { watchedDirectory: watched } : {}) };
  }
  return typeof configSource.path === 'string' ? { path: configSource.path } : undefined;
}

export class FileSubscription {
  private watcher: FSWatcher | undefined;
  private readonly counters;
  private readonly updateTime;
  private readonly versionText;
  private readonly path: string;
  private readonly watched: { dir: string; name: string | undefined };

  constructor(
    source: PathSource,
    /** The stats prefix, e.g. `cluster_manager.cds.`. */
    private readonly prefix: string,
    private readonly apply: ApplyUpdate,
  ) {
    this.path = resolve(source.path);
    this.watched = source.watchedDirectory ? { dir: resolve(source.watchedDirectory), name: undefined } : { dir: dirname(this.path), name: basename(this.path) };
    this.counters = {
      attempt: stats.counter(`${prefix}update_attempt`),
      success: stats.counter(`${prefix}update_success`),
      rejected: stats.counter(`${prefix}update_rejected`),
      failure: stats.counter(`${prefix}update_failure`),
    };
    this.updateTime = stats.gauge(`${prefix}update_time`, 'local');
    this.versionText = stats.textReadout(`${prefix}version_text`);
  }

  /** Reads the file now, then watches for renames. */
  start(): void {
    this.refresh();
    this.watcher = watch(this.watched.dir, { persistent: false }, (event, filename) => {
      if (event !== 'rename') return; // a write in place is never picked up, as in Envoy
      if (this.watched.name !== undefined && filename !== this.watched.name) return;
      if (!existsSync(this.path)) return; // renamed away: the next rename onto it reloads
      this.refresh();
    });
    this.watcher.on('error', (err) => log.error(`watching ${this.watched.dir} for ${this.prefix}: ${err.message}`));
  }

  private refresh(): void {
    this.counters.attempt.inc();
    let response: JsonObject;
    try {
      const root = envoySchema();
      response = readSource(this.path, root, root.lookupType(DISCOVERY_RESPONSE)).document;
    } catch (err) {
      this.counters.failure.inc();
      const why = err instanceof BootstrapError ? err.errors.join('; ') : (err as Error).message;
      log.warn(`filesystem config update failure: ${why}`);
      return;
    }
    const versionInfo = typeof response.version_info === 'string' ? response.version_info : '';
    const resources = Array.isArray(response.resources) ? (response.resources as JsonObject[]) : [];
    const errors = this.apply(versionInfo, resources);
    if (errors.length) {
      this.counters.rejected.inc();
      log.warn(`filesystem config update rejected (${this.path}, version '${versionInfo}'): ${errors.join('; ')}`);
      return;
    }
    this.counters.success.inc();
    this.updateTime.set(Date.now());
    this.versionText.set(versionInfo);
    log.info(`${this.prefix.replace(/\.$/, '')}: applied version '${versionInfo}' from ${this.path}`);
  }

  close(): void {
    this.watcher?.close();
  }
}
