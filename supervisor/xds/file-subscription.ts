import { existsSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { BootstrapError, readSource } from '../../shared/config/bootstrap.js';
import type { envoy } from '../../shared/config/envoy-types.js';
import { list } from '../../shared/config/access.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { envoySchema } from '../../shared/config/schema.js';
import { decodeErrors } from '../../shared/config/xds-resource.js';
import { getLogger } from '../../shared/log/logger.js';
import type { SubscriptionStats } from './subscription-stats.js';
import { working } from '../../shared/idle-housekeeping.js';
import { ResponseRefused } from './response-refused.js';
import { errorText } from '../../shared/config/config-error.js';

/**
 * File-based xDS (`path_config_source`, or the legacy `path`), with Envoy's semantics: the file is
 * one DiscoveryResponse (format by extension: .pb, .pb_text, .yaml/.yml, else JSON), read once at
 * start, and read again only when a file is renamed onto the path — write a temporary file beside
 * it and `mv` it there; a write in place is never picked up half-written. With
 * `watched_directory`, any rename into that directory reloads the path (Kubernetes ConfigMaps
 * swap a `..data` symlink). A file that cannot be read, parsed or decoded (a resource with an
 * unknown enum value, say: Envoy's JSON loader fails the whole file) changes nothing
 * (`update_failure`). One that decodes but that Envoy's resource decoder would refuse (a resource
 * of another type, one breaking its message's rules) is `update_rejected` and changes nothing
 * either; one whose resources are refused one by one is `update_rejected`, and its valid
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

/** What a subscriber does with an update: the errors of the resources it refused (none: accepted), now or once applied. */
export type ApplyUpdate = (versionInfo: string, resources: JsonObject[]) => string[] | Promise<string[]>;

export function pathSourceOf(configSource: envoy.config.core.v3.ConfigSource): PathSource | undefined {
  const pcs = configSource.path_config_source;
  if (pcs?.path !== undefined) {
    const watched = pcs.watched_directory?.path;
    return { path: pcs.path, ...(watched !== undefined ? { watchedDirectory: watched } : {}) };
  }
  return configSource.path !== undefined ? { path: configSource.path } : undefined;
}

export class FileSubscription {
  private watcher: FSWatcher | undefined;
  private applying: Promise<void> = Promise.resolve();
  private readonly path: string;
  private readonly watched: { dir: string; name: string | undefined };

  constructor(
    source: PathSource,
    private readonly stats: SubscriptionStats,
    private readonly apply: ApplyUpdate,
  ) {
    this.path = resolve(source.path);
    this.watched = source.watchedDirectory ? { dir: resolve(source.watchedDirectory), name: undefined } : { dir: dirname(this.path), name: basename(this.path) };
  }

  /** Reads the file now, then watches for renames; resolves once the first reading is applied. */
  start(): Promise<void> {
    const first = this.refresh();
    this.watcher = watch(this.watched.dir, { persistent: false }, (event, filename) => {
      if (event !== 'rename') return; // a write in place is never picked up, as in Envoy
      if (this.watched.name !== undefined && filename !== this.watched.name) return;
      if (!existsSync(this.path)) return; // renamed away: the next rename onto it reloads
      void this.refresh();
    });
    this.watcher.on('error', (err) => log.error(`watching ${this.watched.dir} for ${this.stats.prefix}: ${err.message}`));
    return first;
  }

  /** Reads and applies the file; readings are applied one after another, in order. */
  private refresh(): Promise<void> {
    this.applying = this.applying.then(() => this.readAndApply());
    return this.applying;
  }

  private async readAndApply(): Promise<void> {
    let response: JsonObject;
    try {
      working(); // an update after an idle spell: the optimising compiler is on again before it is read
      const root = envoySchema();
      response = readSource(this.path, root, root.lookupType(DISCOVERY_RESPONSE)).document;
    } catch (err) {
      this.stats.failed();
      const why = err instanceof BootstrapError ? errorText(err.errors) : (err as Error).message;
      log.warn(`filesystem config update failure: ${why}`);
      return;
    }
    const versionInfo = typeof response.version_info === 'string' ? response.version_info : '';
    const resources = list(response.resources);
    // As Envoy's loader: a resource that cannot be decoded fails the whole file, which changes nothing (update_failure).
    const undecodable = resources.flatMap((r, i) => decodeErrors(r).map((e) => e.within(`resources[${i}]`).text));
    if (undecodable.length) {
      this.stats.failed();
      log.warn(`filesystem config update failure: ${this.path}: ${undecodable.join('; ')}`);
      return;
    }
    let errors: string[];
    try {
      errors = await this.stats.update(versionInfo, () => this.apply(versionInfo, resources));
    } catch (err) {
      if (err instanceof ResponseRefused) {
        log.warn(`filesystem config update rejected (${this.path}, version '${versionInfo}'), nothing of it applied: ${err.message}`);
        return;
      }
      errors = [(err as Error).message];
    }
    if (errors.length) log.warn(`filesystem config update rejected (${this.path}, version '${versionInfo}'): ${errors.join('; ')}`);
    else log.info(`${this.stats.prefix.replace(/\.$/, '')}: applied version '${versionInfo}' from ${this.path}`);
  }

  close(): void {
    this.watcher?.close();
  }
}
