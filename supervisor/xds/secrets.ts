import { existsSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { list, obj } from '../../shared/config/access.js';
import { configError, errorText, type ConfigError } from '../../shared/config/config-error.js';
import type { envoy } from '../../shared/config/envoy-types.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { sameResource } from '../../shared/config/resource-hash.js';
import { checkApiConfigSource } from '../../shared/config/semantic/bootstrap.js';
import { durationMs } from '../../shared/config/wkt.js';
import { checkResource, SECRET_TYPE, SECRETS, type UnknownDynamicFields } from '../../shared/config/xds-resource.js';
import type { Extension } from '../../shared/extensions/registry.js';
import { dynamicSecretKey, inlineSecretFiles, SECRET_KINDS, SECRET_TYPE_URL, secretFiles, secretWatchedDirectory, type SecretKind, type SecretLookup, type SecretsDump, type StaticSecrets } from '../../shared/extensions/transport-sockets/tls/secrets.js';
import { getLogger } from '../../shared/log/logger.js';
import { stats } from '../../shared/stats/process.js';
import type { Counter } from '../../shared/stats/store.js';
import { FileSubscription, pathSourceOf } from './file-subscription.js';
import { SDS_METHOD, type GrpcXdsStream } from './grpc-stream.js';
import { screened } from './response-refused.js';
import { SubscriptionStats } from './subscription-stats.js';

/**
 * The tree's secrets, as Envoy's secret manager holds them: the bootstrap's, and those from SDS —
 * one provider per kind, config source and name, shared by every TLS context that names it,
 * subscribed to when a context first asks for it (a file, the aggregated stream, or the SDS
 * service over gRPC), with Envoy's `sds.<name>.` figures. A secret that comes or changes is tried
 * on every context that uses it first (the tree's `changed`): if one of them does not load with
 * it, it is refused (update_rejected, a NACK) and the old one stays. The files a secret names are
 * read when it comes and watched (its watched_directory, else each file's directory) for a
 * rotation, which is not an update of the secret but counts `ssl_context_update_by_sds`, or
 * `key_rotation_failed`. A secret that leaves a response, or is removed by a delta, is kept
 * (Envoy's SdsApi ignores both); one no context names any more is dropped.
 */

type ConfigSource = envoy.config.core.v3.ConfigSource;

const log = getLogger('config', import.meta.url);
/** Envoy's initial_fetch_timeout default. */
const INITIAL_FETCH_TIMEOUT_MS = 15_000;
/** Envoy reads rotated files until two readings agree, at most this many more times. */
const ROTATION_READS = 5;

/** What the secrets need of the tree. */
export interface SecretsTarget {
  /** Every context using the secret of `key` loads again (the lookup gives its new value): errors refuse it, none applied it. */
  changed(key: string): string[];
  /** A secret's first wait ended (it came, was refused, or timed out): listeners and clusters warming for it may go on. */
  initialized(): void;
  /** The secrets changed (/config_dump). */
  report(): void;
}

/** What the secrets need of the other sources: a stream (the aggregated one, or an SDS one under `scope`), the update policy. */
export interface SecretSourcing {
  streamFor(source: ConfigSource, method: string, scope: string): GrpcXdsStream;
  hasAds: boolean;
  staticClusters: Set<string>;
  unknownFields: UnknownDynamicFields;
  disabledExtensions: Set<Extension>;
}

/** A secret from SDS. */
interface Provider {
  key: string;
  kind: SecretKind;
  name: string;
  source: ConfigSource;
  createdMs: number;
  /** As it came, and with its files read (what contexts and /config_dump see). */
  received?: JsonObject;
  secret?: JsonObject;
  versionInfo: string;
  lastUpdatedMs: number;
  /** Its first wait ended. */
  initialized: boolean;
  firstWait: Promise<void>;
  endWait: () => void;
  stats: SubscriptionStats;
  keyRotationFailed: Counter;
  watchers: FSWatcher[];
  /** Its own subscription (a file, an SDS stream); the aggregated stream's is shared. */
  close?: () => void;
}

export class SecretManager implements SecretLookup {
  private readonly providers = new Map<string, Provider>();
  /** While a secret is tried on its contexts: its would-be value. */
  private readonly candidates = new Map<string, JsonObject>();
  /** The aggregated stream's Secret subscription, once made. */
  private adsStream: GrpcXdsStream | undefined;
  target: SecretsTarget = { changed: () => [], initialized: () => {}, report: () => {} };

  constructor(
    private readonly statics: StaticSecrets,
    private readonly sourcing: SecretSourcing,
  ) {}

  staticSecret(kind: SecretKind, name: string): { secret: JsonObject; path: string } | undefined {
    return this.statics.staticSecret(kind, name);
  }

  dynamicSecret(kind: SecretKind, name: string, source: JsonObject, path: string, errors: ConfigError[]): JsonObject | undefined {
    const key = dynamicSecretKey(kind, name, source);
    const candidate = this.candidates.get(key);
    if (candidate) return candidate;
    const known = this.providers.get(key);
    if (known) return known.secret;
    const before = errors.length;
    this.checkSource(source as ConfigSource, path, errors);
    if (errors.length > before) return undefined;
    this.subscribe(kind, name, source as ConfigSource, key);
    return undefined;
  }

  /**
   * Of the secrets a context lacked when it loaded (keys), the names of those it still waits for:
   * whose first wait has not ended, or that came since (the context is to load again).
   */
  pending(keys: readonly string[]): string[] {
    return keys.flatMap((k) => {
      const p = this.providers.get(k);
      return p && (!p.initialized || p.secret) ? [p.name] : [];
    });
  }

  /** Resolves once these secrets' (keys) first waits have ended (all of them: none given). */
  async initialFetches(keys?: readonly string[]): Promise<void> {
    for (;;) {
      const waiting = [...this.providers.values()].filter((p) => !p.initialized && (!keys || keys.includes(p.key)));
      if (waiting.length === 0) return;
      await Promise.all(waiting.map((p) => p.firstWait));
    }
  }

  /** Drops the secrets no context names any more (`used`: the keys that are). */
  prune(used: Set<string>): void {
    let dropped = false;
    for (const [key, p] of this.providers) {
      if (used.has(key)) continue;
      this.providers.delete(key);
      p.close?.();
      for (const w of p.watchers) w.close();
      p.endWait();
      dropped = true;
    }
    if (dropped) {
      this.renameAds();
      this.target.report();
    }
  }

  dump(): SecretsDump {
    const providers = [...this.providers.values()].sort((a, b) => SECRET_KINDS.indexOf(a.kind) - SECRET_KINDS.indexOf(b.kind));
    return {
      static: [...this.statics.all].sort((a, b) => SECRET_KINDS.indexOf(kindOf(a.secret)) - SECRET_KINDS.indexOf(kindOf(b.secret))),
      active: providers.filter((p) => p.secret).map((p) => ({ name: p.name, versionInfo: p.versionInfo, lastUpdatedMs: p.lastUpdatedMs, secret: p.secret! })),
      warming: providers.filter((p) => !p.secret).map((p) => ({ name: p.name, lastUpdatedMs: p.createdMs })),
    };
  }

  close(): void {
    for (const p of this.providers.values()) {
      p.close?.();
      for (const w of p.watchers) w.close();
    }
  }

  /** What only the bootstrap can tell about a source: Envoy's rules for any xDS source. */
  private checkSource(source: ConfigSource, path: string, errors: ConfigError[]): void {
    if (source.ads !== undefined) {
      if (!this.sourcing.hasAds) errors.push(configError('missing', `${path}.ads`, 'an ads source needs dynamic_resources.ads_config in the bootstrap'));
      return;
    }
    if (source.api_config_source !== undefined) {
      checkApiConfigSource(obj(source.api_config_source), `${path}.api_config_source`, this.sourcing.staticClusters, errors);
      return;
    }
    const file = pathSourceOf(source);
    if (!file) errors.push(configError('unsupported', path, 'an SDS source is a file (path_config_source), ads, or an api_config_source'));
    else if (!existsSync(file.path)) errors.push(configError('unknown_reference', path, `paths must refer to an existing path in the system: '${file.path}' does not exist`));
  }

  private subscribe(kind: SecretKind, name: string, source: ConfigSource, key: string): void {
    const nowMs = Date.now();
    let endWait!: () => void;
    const firstWait = new Promise<void>((resolve) => (endWait = resolve));
    const p: Provider = {
      key, kind, name, source, createdMs: nowMs, versionInfo: 'uninitialized', lastUpdatedMs: nowMs, initialized: false, firstWait, endWait,
      stats: new SubscriptionStats(`sds.${name}.`, false, false),
      keyRotationFailed: stats.counter(`sds.${name}.key_rotation_failed`),
      watchers: [],
    };
    this.providers.set(key, p);
    this.target.report();
    const file = pathSourceOf(source);
    if (file) {
      // Every resource of the file goes to the secret: Envoy's checks of their number and name apply.
      const subscription = new FileSubscription(file, p.stats, screened(SECRET_TYPE, this.sourcing.unknownFields, (version, resources) => this.fromFile(p, version, resources)));
      p.close = () => subscription.close();
      void subscription.start().then(() => this.initialize(p));
      return;
    }
    const timeoutMs = source.initial_fetch_timeout !== undefined ? durationMs(source.initial_fetch_timeout) : INITIAL_FETCH_TIMEOUT_MS;
    if (timeoutMs > 0) {
      setTimeout(() => {
        if (p.initialized || this.providers.get(key) !== p) return;
        p.stats.initialFetchTimedOut();
        log.warn(`sds: secret '${name}' has not come within the initial fetch timeout (${timeoutMs} ms): its listeners and clusters go on without it (their TLS connections fail until it comes)`);
        this.initialize(p);
      }, timeoutMs).unref();
    }
    p.stats.started();
    if (source.ads !== undefined) {
      this.renameAds();
      return;
    }
    // Envoy's SdsApi has a subscription (a stream) of its own, its figures under sds.<name>.
    const stream = this.sourcing.streamFor(source, SDS_METHOD, `sds.${name}.`);
    p.close = () => stream.close();
    stream.subscribe(SECRET_TYPE_URL, screened(SECRET_TYPE, this.sourcing.unknownFields, (version, resources) => this.fromStream([p], version, resources)), undefined, [name]);
  }

  /** The aggregated stream asks for every secret of ADS sources, by name. */
  private renameAds(): void {
    const names = [...new Set([...this.providers.values()].filter((p) => p.source.ads !== undefined).map((p) => p.name))].sort();
    if (!this.adsStream) {
      if (names.length === 0) return;
      const first = [...this.providers.values()].find((p) => p.source.ads !== undefined)!;
      this.adsStream = this.sourcing.streamFor(first.source, SDS_METHOD, '');
      const adsProviders = () => [...this.providers.values()].filter((p) => p.source.ads !== undefined);
      this.adsStream.subscribe(SECRET_TYPE_URL, screened(SECRET_TYPE, this.sourcing.unknownFields, (version, resources) => this.fromStream(adsProviders(), version, resources)), undefined, names);
      return;
    }
    this.adsStream.rename(SECRET_TYPE_URL, names);
  }

  /**
   * A control plane's response: each secret to the providers of its name (a name not asked for is
   * passed over, as Envoy's mux passes it over), counted by each; the errors of those refused.
   */
  private fromStream(providers: Provider[], versionInfo: string, resources: JsonObject[]): string[] {
    const errors: string[] = [];
    for (const resource of resources) {
      for (const p of providers.filter((x) => x.name === resource.name)) {
        errors.push(...p.stats.update(versionInfo, () => this.take(p, versionInfo, resource)));
      }
    }
    return errors;
  }

  /** A file's response: one secret, of the name asked for (Envoy's words otherwise). */
  private fromFile(p: Provider, versionInfo: string, resources: JsonObject[]): string[] {
    if (resources.length === 0) return this.refused(p, [`Missing SDS resources for ${p.name} in onConfigUpdate()`]);
    if (resources.length > 1) return this.refused(p, [`Unexpected SDS secrets length for ${p.name}, number of added resources ${resources.length}, number of removed resources 0. Expected sum is 1`]);
    if (resources[0]!.name !== p.name) return this.refused(p, [`Unexpected SDS secret (expecting ${p.name}): ${String(resources[0]!.name ?? '')}`]);
    return this.take(p, versionInfo, resources[0]!);
  }

  private refused(p: Provider, errors: string[]): string[] {
    log.warn(`sds: secret '${p.name}' refused: ${errors.join('; ')}`);
    this.initialize(p);
    this.target.report();
    return errors;
  }

  /** One secret as it came: checked, its files read, tried on its contexts; the errors if refused. */
  private take(p: Provider, versionInfo: string, resource: JsonObject): string[] {
    const checked = checkResource(SECRET_TYPE, resource, this.sourcing.unknownFields, this.sourcing.disabledExtensions);
    if (!checked.message) return this.refused(p, [`${SECRETS.kind} '${p.name}': ${errorText(checked.errors)}`]);
    const message = checked.message;
    if (message[p.kind] === undefined) return this.refused(p, [`secret '${p.name}' has no ${p.kind}, which its users take it for`]);
    let secret: JsonObject;
    try {
      secret = inlineSecretFiles(message, (f) => readFileSync(f));
    } catch (err) {
      return this.refused(p, [`secret '${p.name}': ${(err as Error).message}`]);
    }
    if (!p.secret || !sameResource(p.secret, secret)) {
      const errors = this.tryOn(p, secret);
      if (errors.length) return this.refused(p, errors);
      p.received = message;
      this.watchFiles(p);
    }
    p.versionInfo = versionInfo;
    p.lastUpdatedMs = Date.now();
    log.info(`sds: secret '${p.name}' version '${versionInfo}' in force`);
    this.initialize(p);
    this.target.report();
    return [];
  }

  /** The contexts using the secret load with `secret`; none refusing it, it is the secret from now on. */
  private tryOn(p: Provider, secret: JsonObject): string[] {
    this.candidates.set(p.key, secret);
    let errors: string[];
    try {
      errors = this.target.changed(p.key);
    } finally {
      this.candidates.delete(p.key);
    }
    if (errors.length === 0) p.secret = secret;
    return errors;
  }

  private initialize(p: Provider): void {
    if (p.initialized) return;
    p.initialized = true;
    p.endWait();
    this.target.initialized();
  }

  /** The secret's files, watched for a rotation: its watched_directory, else each file's directory. */
  private watchFiles(p: Provider): void {
    for (const w of p.watchers) w.close();
    p.watchers = [];
    const received = p.received!;
    // A generic secret is kept as it came (its users read its files): nothing to read again.
    if (p.kind === 'generic_secret') return;
    const dirs = new Set<string>();
    const watched = secretWatchedDirectory(received);
    if (watched !== undefined) dirs.add(resolve(watched));
    else for (const f of secretFiles(received)) dirs.add(dirname(resolve(f)));
    let scheduled = false;
    for (const dir of dirs) {
      try {
        const w = watch(dir, { persistent: false }, (event) => {
          if (event !== 'rename' || scheduled) return;
          scheduled = true;
          setImmediate(() => {
            scheduled = false;
            this.rotate(p);
          });
        });
        w.on('error', (err) => log.error(`sds: watching ${dir} for secret '${p.name}': ${err.message}`));
        p.watchers.push(w);
      } catch (err) {
        log.error(`sds: cannot watch ${dir} for secret '${p.name}': ${(err as Error).message}`);
      }
    }
  }

  /** A file of the secret was renamed: read again (until two readings agree) and, if changed, in force on its contexts. */
  private rotate(p: Provider): void {
    if (this.providers.get(p.key) !== p || !p.received) return;
    let secret: JsonObject;
    try {
      secret = inlineSecretFiles(p.received, (f) => readFileSync(f));
      for (let i = 0; i < ROTATION_READS; i++) {
        const again = inlineSecretFiles(p.received, (f) => readFileSync(f));
        if (sameResource(again, secret)) break;
        secret = again;
        if (i === ROTATION_READS - 1) log.warn(`sds: secret '${p.name}': Unable to atomically refresh secrets due to > ${ROTATION_READS} non-atomic rotations observed`);
      }
    } catch (err) {
      p.keyRotationFailed.inc();
      log.warn(`sds: secret '${p.name}': Failed to reload certificates: ${(err as Error).message}`);
      return;
    }
    if (p.secret && sameResource(p.secret, secret)) return;
    const errors = this.tryOn(p, secret);
    if (errors.length) {
      p.keyRotationFailed.inc();
      log.warn(`sds: secret '${p.name}': Failed to reload certificates: ${errors.join('; ')}`);
      return;
    }
    log.info(`sds: secret '${p.name}': its files changed; new connections use them`);
    this.target.report();
  }
}

function kindOf(secret: JsonObject): SecretKind {
  return SECRET_KINDS.find((k) => secret[k] !== undefined) ?? 'generic_secret';
}

/** The bootstrap names an ADS source only with dynamic_resources.ads_config. */
export function bootstrapHasAds(bootstrap: JsonObject): boolean {
  return obj(bootstrap.dynamic_resources).ads_config !== undefined;
}

/** The names of the bootstrap's static clusters (an api_config_source's cluster must be one). */
export function staticClusterNames(bootstrap: JsonObject): Set<string> {
  return new Set(list(obj(bootstrap.static_resources).clusters).map((c) => String(c.name)));
}
