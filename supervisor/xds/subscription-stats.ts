import { xxHash64 } from '../../shared/hashing.js';
import { stats } from '../../shared/stats/process.js';
import type { Counter, Gauge } from '../../shared/stats/store.js';
import { ResponseRefused } from './response-refused.js';

/**
 * A subscription's figures, named as Envoy names them under its prefix (e.g.
 * `cluster_manager.cds.`): every update is an attempt, then a success (with its version and
 * time), a rejection (resources refused: a NACK), or a failure (nothing could be read). An
 * accepted update with another version than the last is a config reload (`config_reload`, and for
 * CDS, LDS and RDS its time, `config_reload_time_ms`); `version` is Envoy's xxHash64 of the
 * version_info (a gauge holding the exact 64-bit value, see Gauge.setExact).
 */
export class SubscriptionStats {
  private readonly attempts;
  private readonly successes;
  private readonly rejections;
  private readonly failures;
  private readonly initFetchTimeouts;
  private readonly updateTime;
  private readonly versionText;
  private readonly configReload: Counter | undefined;
  private readonly configReloadTime: Gauge | undefined;
  private readonly version: Gauge;
  private lastVersion: string | undefined;

  constructor(
    readonly prefix: string,
    /** config_reload_time_ms: CDS, LDS and RDS have it, an EDS cluster not. */
    reloadTime = true,
    /** config_reload: every subscription but SDS's (whose figures are the subscription's alone). */
    reload = true,
  ) {
    this.attempts = stats.counter(`${prefix}update_attempt`);
    this.successes = stats.counter(`${prefix}update_success`);
    this.rejections = stats.counter(`${prefix}update_rejected`);
    this.failures = stats.counter(`${prefix}update_failure`);
    this.initFetchTimeouts = stats.counter(`${prefix}init_fetch_timeout`);
    this.updateTime = stats.gauge(`${prefix}update_time`, 'local');
    this.versionText = stats.textReadout(`${prefix}version_text`);
    this.configReload = reload ? stats.counter(`${prefix}config_reload`) : undefined;
    this.configReloadTime = reloadTime ? stats.gauge(`${prefix}config_reload_time_ms`, 'local') : undefined;
    this.version = stats.gauge(`${prefix}version`, 'local');
  }

  /**
   * Applies an update through `apply` and counts its outcome; returns the refusals (a promise when
   * `apply` gives one). A response refused as a whole (ResponseRefused, thrown on) is a rejection.
   */
  update(versionInfo: string, apply: () => string[]): string[];
  update(versionInfo: string, apply: () => string[] | Promise<string[]>): string[] | Promise<string[]>;
  update(versionInfo: string, apply: () => string[] | Promise<string[]>): string[] | Promise<string[]> {
    this.attempts.inc();
    const refused = (err: unknown): never => {
      if (err instanceof ResponseRefused) this.rejections.inc();
      throw err;
    };
    let errors: string[] | Promise<string[]>;
    try {
      errors = apply();
    } catch (err) {
      return refused(err);
    }
    return errors instanceof Promise ? errors.then((e) => this.outcome(versionInfo, e), refused) : this.outcome(versionInfo, errors);
  }

  /** A response refused as a whole, counted where no apply ran for it (every watcher of its type, as in Envoy). */
  refusedWhole(): void {
    this.attempts.inc();
    this.rejections.inc();
  }

  private outcome(versionInfo: string, errors: string[]): string[] {
    if (errors.length) {
      this.rejections.inc();
      return errors;
    }
    this.successes.inc();
    const now = Date.now();
    this.updateTime.set(now);
    this.versionText.set(versionInfo);
    this.version.setExact(xxHash64(versionInfo));
    if (versionInfo !== this.lastVersion) {
      this.lastVersion = versionInfo;
      this.configReload?.inc();
      this.configReloadTime?.set(now);
    }
    return errors;
  }

  /**
   * A gRPC subscription started: an attempt of its own, as Envoy's gRPC subscriptions count one
   * at start (so that ADS and per-type sources count alike), before any response.
   */
  started(): void {
    this.attempts.inc();
  }

  /** An update that could not even be read. */
  failed(): void {
    this.attempts.inc();
    this.failures.inc();
  }

  initialFetchTimedOut(): void {
    this.initFetchTimeouts.inc();
  }
}
