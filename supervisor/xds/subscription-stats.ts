import { stats } from '../../shared/stats/process.js';

/**
 * A subscription's figures, named as Envoy names them under its prefix (e.g.
 * `cluster_manager.cds.`): every update is an attempt, then a success (with its version and
 * time), a rejection (resources refused: a NACK), or a failure (nothing could be read).
 */
export class SubscriptionStats {
  private readonly attempts;
  private readonly successes;
  private readonly rejections;
  private readonly failures;
  private readonly initFetchTimeouts;
  private readonly updateTime;
  private readonly versionText;

  constructor(readonly prefix: string) {
    this.attempts = stats.counter(`${prefix}update_attempt`);
    this.successes = stats.counter(`${prefix}update_success`);
    this.rejections = stats.counter(`${prefix}update_rejected`);
    this.failures = stats.counter(`${prefix}update_failure`);
    this.initFetchTimeouts = stats.counter(`${prefix}init_fetch_timeout`);
    this.updateTime = stats.gauge(`${prefix}update_time`, 'local');
    this.versionText = stats.textReadout(`${prefix}version_text`);
  }

  /** Applies an update through `apply` and counts its outcome; returns the refusals (a promise when `apply` gives one). */
  update(versionInfo: string, apply: () => string[]): string[];
  update(versionInfo: string, apply: () => string[] | Promise<string[]>): string[] | Promise<string[]>;
  update(versionInfo: string, apply: () => string[] | Promise<string[]>): string[] | Promise<string[]> {
    this.attempts.inc();
    const errors = apply();
    return errors instanceof Promise ? errors.then((e) => this.outcome(versionInfo, e)) : this.outcome(versionInfo, errors);
  }

  private outcome(versionInfo: string, errors: string[]): string[] {
    if (errors.length) {
      this.rejections.inc();
      return errors;
    }
    this.successes.inc();
    this.updateTime.set(Date.now());
    this.versionText.set(versionInfo);
    return errors;
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
