import { durationMs } from '../../shared/config/wkt.js';
import type { envoy } from '../../shared/config/envoy-types.js';
import { getLogger } from '../../shared/log/logger.js';
import { stats } from '../../shared/stats/process.js';
import { HealthFlag } from '../../shared/upstream/health.js';
import type { UpstreamHost } from '../../shared/upstream/hosts.js';
import { OUTLIER_READOUT_PREFIX, type OutcomeKind, type OutcomeRuns, type OutlierReport } from '../../shared/upstream/outcomes.js';
import { presentAtZero } from '../../shared/stats/always-present.js';

/**
 * Outlier detection (a cluster's `outlier_detection`), one detector per cluster for the whole
 * tree, in the supervisor as on Envoy's main thread. Workers report every upstream outcome in
 * run-length batches (about every 100 ms, see worker/upstream/outcomes.ts), so the detector sees
 * the whole tree's traffic; consecutive counts interleave the workers' batches in arrival order.
 *
 * - consecutive_5xx / consecutive_gateway_failure: ejection when a host reaches the count
 *   (5xx: any 5xx or local failure; gateway: 502, 503, 504 or a local failure).
 * - With split_external_local_origin_errors, local failures (connect failure, timeout, reset)
 *   are not responses: they count towards consecutive_local_origin_failure and a local-origin
 *   success rate and failure percentage of their own (a connection had is a local success),
 *   as Envoy's putResultWithLocalExternalSplit.
 * - success rate and failure percentage, every `interval`, over hosts with enough requests.
 * - An ejection lasts base_ejection_time × the host's ejection count (capped by
 *   max_ejection_time, plus jitter); it ends at the first interval tick after that, or at a
 *   passing active health check. The count decays by one each interval the host stays in.
 * - At most max_ejection_percent of the hosts are ejected at once (always_eject_one_host aside).
 * Ejection sets FAILED_OUTLIER_CHECK on the membership, which every worker follows.
 */

const log = getLogger('upstream', import.meta.url);

interface HostState {
  consecutive5xx: number;
  consecutiveGateway: number;
  consecutiveLocal: number;
  success: number;
  total: number;
  /** Success rate over the last interval, -1 without enough requests. */
  successRate: number;
  /** The local-origin monitor (split_external_local_origin_errors only). */
  localSuccess: number;
  localTotal: number;
  localSuccessRate: number;
  ejectedAt: number | undefined;
  ejectedForMs: number;
  ejections: number;
}

type EjectionType =
  | 'consecutive_5xx' | 'consecutive_gateway_failure' | 'success_rate' | 'failure_percentage'
  | 'consecutive_local_origin_failure' | 'local_origin_success_rate' | 'local_origin_failure_percentage';

export class OutlierDetector {
  private readonly hosts = new Map<string, HostState>();
  private readonly timer: NodeJS.Timeout;
  private readonly c: ReturnType<typeof settings>;
  private readonly counters: Record<string, ReturnType<typeof stats.counter>> = {};
  private readonly active;
  private readonly report;
  private average = -1;
  private threshold = -1;
  private localAverage = -1;
  private localThreshold = -1;

  constructor(
    readonly cluster: string,
    config: envoy.config.cluster.v3.OutlierDetection,
    private readonly setFlags: (address: string, bits: number, on: boolean) => void,
  ) {
    this.c = settings(config);
    const p = `cluster.${cluster}.outlier_detection.`;
    presentAtZero('outlierDetection', p);
    for (const name of [
      'ejections_enforced_total', 'ejections_overflow', 'ejections_total', 'ejections_consecutive_5xx',
      'ejections_enforced_consecutive_5xx', 'ejections_detected_consecutive_5xx',
      'ejections_enforced_consecutive_gateway_failure', 'ejections_detected_consecutive_gateway_failure',
      'ejections_enforced_success_rate', 'ejections_detected_success_rate', 'ejections_success_rate',
      'ejections_enforced_failure_percentage', 'ejections_detected_failure_percentage',
      'ejections_enforced_consecutive_local_origin_failure', 'ejections_detected_consecutive_local_origin_failure',
      'ejections_enforced_local_origin_success_rate', 'ejections_detected_local_origin_success_rate',
      'ejections_enforced_local_origin_failure_percentage', 'ejections_detected_local_origin_failure_percentage',
    ]) {
      this.counters[name] = stats.counter(`${p}${name}`);
    }
    this.active = stats.gauge(`${p}ejections_active`, 'local');
    this.report = stats.textReadout(`${OUTLIER_READOUT_PREFIX}${cluster}`);
    this.publish();
    this.timer = setInterval(() => this.onInterval(), this.c.intervalMs);
    this.timer.unref();
  }

  /** The membership changed: hosts come and go (a host that returns starts afresh). */
  sync(hosts: readonly UpstreamHost[]): void {
    const live = new Set(hosts.map((h) => h.address));
    for (const address of this.hosts.keys()) if (!live.has(address)) this.hosts.delete(address);
    for (const h of hosts) {
      if (!this.hosts.has(h.address)) {
        this.hosts.set(h.address, {
          consecutive5xx: 0, consecutiveGateway: 0, consecutiveLocal: 0, success: 0, total: 0, successRate: -1,
          localSuccess: 0, localTotal: 0, localSuccessRate: -1, ejectedAt: undefined, ejectedForMs: 0, ejections: 0,
        });
      }
    }
    this.active.set([...this.hosts.values()].filter((s) => s.ejectedAt !== undefined).length);
  }

  /** One worker's batch for this cluster: per host, runs of outcomes in the order they happened. */
  onOutcomes(hosts: [address: string, runs: OutcomeRuns][]): void {
    for (const [address, runs] of hosts) {
      const s = this.hosts.get(address);
      if (!s) continue;
      for (let i = 0; i < runs.length; i += 2) this.apply(address, s, runs[i] as OutcomeKind, runs[i + 1] as number);
    }
  }

  private apply(address: string, s: HostState, kind: OutcomeKind, count: number): void {
    switch (kind) {
      case 'C':
        return this.localSuccess(s, count);
      case 'L':
        return this.localFailures(address, s, count);
      case 'l':
        // Each: the connection had, then a local failure (one failure in a row each time).
        this.localSuccess(s, count);
        s.localTotal += count;
        return this.localFailures(address, s, 0, 1);
      case 's':
      case 'e':
      case 'g':
        this.localSuccess(s, count);
        return this.response(address, s, kind.toUpperCase() as 'S' | 'E' | 'G', count);
      default:
        return this.response(address, s, kind, count);
    }
  }

  /** Envoy's localOriginNoFailure, `count` times. */
  private localSuccess(s: HostState, count: number): void {
    s.localTotal += count;
    s.localSuccess += count;
    s.consecutiveLocal = 0;
  }

  /** Envoy's localOriginFailure, `count` times (or, with `runTo`, the run of failures set to that). */
  private localFailures(address: string, s: HostState, count: number, runTo?: number): void {
    s.localTotal += count;
    if (s.ejectedAt !== undefined) return;
    const before = s.consecutiveLocal;
    s.consecutiveLocal = runTo ?? before + count;
    const limit = this.c.consecutiveLocal;
    if (limit > 0 && (runTo !== undefined || before < limit) && s.consecutiveLocal >= limit) {
      s.consecutiveLocal = 0;
      this.detected(address, s, 'consecutive_local_origin_failure');
    }
  }

  /** Envoy's putHttpResponseCode, `count` times. */
  private response(address: string, s: HostState, kind: 'S' | 'E' | 'G', count: number): void {
    s.total += count;
    if (kind === 'S') {
      s.success += count;
      s.consecutive5xx = 0;
      s.consecutiveGateway = 0;
      return;
    }
    if (s.ejectedAt !== undefined) return;
    if (kind === 'G') {
      const before = s.consecutiveGateway;
      s.consecutiveGateway += count;
      if (before < this.c.consecutiveGateway && s.consecutiveGateway >= this.c.consecutiveGateway) {
        this.detected(address, s, 'consecutive_gateway_failure');
        if (s.ejectedAt !== undefined) return;
      }
    } else {
      s.consecutiveGateway = 0;
    }
    const before = s.consecutive5xx;
    s.consecutive5xx += count;
    if (before < this.c.consecutive5xx && s.consecutive5xx >= this.c.consecutive5xx) this.detected(address, s, 'consecutive_5xx');
  }

  private detected(address: string, s: HostState, type: EjectionType): void {
    this.counters[`ejections_detected_${type}`]!.inc();
    this.eject(address, s, type);
  }

  private eject(address: string, s: HostState, type: EjectionType): void {
    const active = [...this.hosts.values()].filter((h) => h.ejectedAt !== undefined).length;
    const percent = (100 * (active + 1)) / this.hosts.size;
    if (!(percent <= this.c.maxEjectionPercent || (active === 0 && this.c.alwaysEjectOne))) {
      this.counters.ejections_overflow!.inc();
      return;
    }
    if (type === 'consecutive_5xx' || type === 'success_rate') {
      this.counters.ejections_total!.inc();
      this.counters[type === 'consecutive_5xx' ? 'ejections_consecutive_5xx' : 'ejections_success_rate']!.inc();
    }
    // Deprecated, and counted for either monitor's success rate (processSuccessRateEjections).
    if (type === 'local_origin_success_rate') this.counters.ejections_success_rate!.inc();
    if (Math.random() * 100 >= this.c.enforcing[type]) return;
    this.counters.ejections_enforced_total!.inc();
    this.counters[`ejections_enforced_${type}`]!.inc();
    s.ejections++;
    const jitter = this.c.maxEjectionTimeJitterMs > 0 ? Math.random() * this.c.maxEjectionTimeJitterMs : 0;
    s.ejectedForMs = Math.min(this.c.baseEjectionMs * s.ejections, Math.max(this.c.baseEjectionMs, this.c.maxEjectionMs)) + jitter;
    s.ejectedAt = Date.now();
    s.consecutive5xx = 0;
    s.consecutiveGateway = 0;
    s.consecutiveLocal = 0;
    this.active.set(active + 1);
    log.info(`cluster '${this.cluster}': host ${address} ejected (${type}) for ${Math.round(s.ejectedForMs)} ms`);
    this.setFlags(address, HealthFlag.FAILED_OUTLIER_CHECK, true);
  }

  /** A passing active health check ends an ejection (successful_active_health_check_uneject_host). */
  healthCheckPassed(address: string): void {
    const s = this.hosts.get(address);
    if (s?.ejectedAt !== undefined && this.c.unejectOnHealthCheck) this.uneject(address, s);
  }

  private uneject(address: string, s: HostState): void {
    s.ejectedAt = undefined;
    this.active.set([...this.hosts.values()].filter((h) => h.ejectedAt !== undefined).length);
    log.info(`cluster '${this.cluster}': host ${address} is back from ejection`);
    this.setFlags(address, HealthFlag.FAILED_OUTLIER_CHECK, false);
  }

  private onInterval(): void {
    const now = Date.now();
    for (const [address, s] of this.hosts) {
      if (s.ejectedAt !== undefined) {
        if (now >= s.ejectedAt + s.ejectedForMs) this.uneject(address, s);
      } else if (s.ejections > 0) {
        s.ejections--;
      }
    }
    this.successRates();
    for (const s of this.hosts.values()) {
      s.success = 0;
      s.total = 0;
      s.localSuccess = 0;
      s.localTotal = 0;
    }
    this.publish();
  }

  /** Both monitors' success rates and failure percentages (the local one has data only with the split). */
  private successRates(): void {
    [this.average, this.threshold] = this.monitorRates('external');
    [this.localAverage, this.localThreshold] = this.monitorRates('local');
  }

  /** One monitor's success rate (mean − stdev_factor × stdev) and failure percentage over hosts with enough volume: its average and threshold. */
  private monitorRates(monitor: 'external' | 'local'): [number, number] {
    const local = monitor === 'local';
    const figures = (s: HostState) => (local ? { ok: s.localSuccess, total: s.localTotal } : { ok: s.success, total: s.total });
    const setRate = (s: HostState, rate: number) => (local ? (s.localSuccessRate = rate) : (s.successRate = rate));
    for (const s of this.hosts.values()) {
      const { ok, total } = figures(s);
      setRate(s, total >= this.c.srRequestVolume && total > 0 ? (100 * ok) / total : -1);
    }
    let average = -1;
    let threshold = -1;
    const valid = [...this.hosts].filter(([, s]) => (local ? s.localSuccessRate : s.successRate) >= 0);
    if (valid.length > 0 && valid.length >= this.c.srMinimumHosts) {
      const rates = valid.map(([, s]) => (local ? s.localSuccessRate : s.successRate));
      const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
      const stdev = Math.sqrt(rates.reduce((a, r) => a + (r - mean) ** 2, 0) / rates.length);
      average = mean;
      threshold = mean - this.c.srStdevFactor * stdev;
      for (const [address, s] of valid) {
        if (s.ejectedAt === undefined && (local ? s.localSuccessRate : s.successRate) < threshold) this.detected(address, s, local ? 'local_origin_success_rate' : 'success_rate');
      }
    }
    const fpValid = [...this.hosts].filter(([, s]) => figures(s).total >= this.c.fpRequestVolume && figures(s).total > 0);
    if (fpValid.length > 0 && fpValid.length >= this.c.fpMinimumHosts) {
      for (const [address, s] of fpValid) {
        const { ok, total } = figures(s);
        if (s.ejectedAt === undefined && (100 * (total - ok)) / total >= this.c.fpThreshold) this.detected(address, s, local ? 'local_origin_failure_percentage' : 'failure_percentage');
      }
    }
    return [average, threshold];
  }

  /** What /clusters prints: the averages and thresholds of the last interval, and each host's rate. */
  private publish(): void {
    const r: OutlierReport = {
      average: this.average,
      threshold: this.threshold,
      hosts: Object.fromEntries([...this.hosts].map(([a, s]) => [a, s.successRate])),
      localAverage: this.localAverage,
      localThreshold: this.localThreshold,
      localHosts: Object.fromEntries([...this.hosts].map(([a, s]) => [a, s.localSuccessRate])),
    };
    this.report.set(JSON.stringify(r));
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

function settings(o: envoy.config.cluster.v3.OutlierDetection) {
  const n = (v: number | undefined, fallback: number) => v ?? fallback;
  const d = (v: string | undefined, fallback: number) => (v === undefined ? fallback : durationMs(v));
  return {
    intervalMs: Math.max(1, d(o.interval, 10_000)),
    baseEjectionMs: d(o.base_ejection_time, 30_000),
    maxEjectionMs: d(o.max_ejection_time, 300_000),
    maxEjectionTimeJitterMs: d(o.max_ejection_time_jitter, 0),
    maxEjectionPercent: n(o.max_ejection_percent, 10),
    alwaysEjectOne: o.always_eject_one_host === true,
    unejectOnHealthCheck: o.successful_active_health_check_uneject_host !== false,
    consecutive5xx: n(o.consecutive_5xx, 5),
    consecutiveGateway: n(o.consecutive_gateway_failure, 5),
    consecutiveLocal: n(o.consecutive_local_origin_failure, 5),
    srMinimumHosts: n(o.success_rate_minimum_hosts, 5),
    srRequestVolume: n(o.success_rate_request_volume, 100),
    srStdevFactor: n(o.success_rate_stdev_factor, 1900) / 1000,
    fpThreshold: n(o.failure_percentage_threshold, 85),
    fpMinimumHosts: n(o.failure_percentage_minimum_hosts, 5),
    fpRequestVolume: n(o.failure_percentage_request_volume, 50),
    enforcing: {
      consecutive_5xx: n(o.enforcing_consecutive_5xx, 100),
      consecutive_gateway_failure: n(o.enforcing_consecutive_gateway_failure, 0),
      success_rate: n(o.enforcing_success_rate, 100),
      failure_percentage: n(o.enforcing_failure_percentage, 0),
      consecutive_local_origin_failure: n(o.enforcing_consecutive_local_origin_failure, 100),
      local_origin_success_rate: n(o.enforcing_local_origin_success_rate, 100),
      local_origin_failure_percentage: n(o.enforcing_failure_percentage_local_origin, 0),
    } satisfies Record<EjectionType, number>,
  };
}
