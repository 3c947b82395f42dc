import { PassThrough } from 'node:stream';
import { list, obj } from '../../shared/config/access.js';
import type { Cluster } from '../../shared/config/envoy-types.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { typeNameOfUrl } from '../../shared/config/wkt.js';
import { quantiles } from '../../shared/stats/histogram.js';
import type { MergedStats } from '../../shared/stats/merged.js';
import type { AdminEndpoint } from '../endpoint.js';
import type { StatsCollector } from '../stats-collector.js';
import { thresholds } from './clusters.js';

/**
 * /dashboard_event_stream: Envoy's Hystrix stats sink (`envoy.stat_sinks.hystrix`), served where
 * the seed puts it. With the sink configured, every stats flush pushes to each open stream, per
 * cluster, a HystrixCommand and a HystrixThreadPool record (`data: {…}` server-sent events),
 * then one `:` keep-alive comment. Counts are rolling: the change over the last `num_buckets`
 * flushes. The seed's adaptations: rejections are `upstream_rq_pending_overflow`, the circuit
 * is always forced closed, short-circuited is always 0, latency is the last flush interval's and
 * its mean is unavailable. Without the sink the endpoint does not exist (404), as in Envoy.
 */

const HYSTRIX_SINK = 'envoy.config.metrics.v3.HystrixSink';
const DEFAULT_NUM_BUCKETS = 10;
const LATENCY_QUANTILES = [0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 1];

/** The configured Hystrix sink's `num_buckets`, or undefined without one. */
export function hystrixBuckets(bootstrap: JsonObject): number | undefined {
  const sink = list(bootstrap.stats_sinks).find((s) => {
    const type = obj(s.typed_config)['@type'];
    return typeof type === 'string' ? typeNameOfUrl(type) === HYSTRIX_SINK : s.name === 'envoy.stat_sinks.hystrix';
  });
  if (!sink) return undefined;
  const n = Number(obj(sink.typed_config).num_buckets ?? 0);
  return n > 0 ? n : DEFAULT_NUM_BUCKETS;
}

/** A cluster's counter values at each of the last num_buckets + 1 flushes. */
interface Windows {
  success: number[];
  errors: number[];
  timeouts: number[];
  rejected: number[];
  total: number[];
}

/** Envoy's members: `"key": value`, separated by `, `. */
const members = (pairs: [string, string | number | boolean][]) => pairs.map(([k, v]) => `"${k}": ${typeof v === 'string' ? `"${v}"` : v}`).join(', ');

export class HystrixStream {
  private readonly streams = new Set<PassThrough>();
  private readonly windows = new Map<string, Windows>();

  constructor(
    private readonly clusters: Cluster[],
    private readonly merged: MergedStats,
    private readonly numBuckets: number,
    private readonly flushIntervalMs: number,
  ) {}

  open(): PassThrough {
    const stream = new PassThrough();
    this.streams.add(stream);
    stream.once('close', () => {
      this.streams.delete(stream);
      // Nobody listens: start the windows afresh for the next client, as Envoy does.
      if (this.streams.size === 0) this.windows.clear();
    });
    return stream;
  }

  get listeners(): number {
    return this.streams.size;
  }

  private counter(name: string): number {
    return this.merged.counters.get(name)?.value ?? 0;
  }

  /** Pushes the new values into a cluster's windows; returns the rolling values (newest − oldest). */
  private roll(cluster: string): Record<keyof Windows, number> {
    const p = `cluster.${cluster}.`;
    const timeouts = this.counter(`${p}upstream_rq_timeout`) + this.counter(`${p}upstream_rq_per_try_timeout`);
    // Every try's response is counted (retries are separate requests); timeouts answer 504, so they come off the errors.
    const errors = Math.max(0, this.counter(`${p}upstream_rq_5xx`) + this.counter(`${p}upstream_rq_4xx`) - this.counter(`${p}upstream_rq_timeout`));
    const success = this.counter(`${p}upstream_rq_2xx`);
    const rejected = this.counter(`${p}upstream_rq_pending_overflow`);
    const now: Record<keyof Windows, number> = { success, errors, timeouts, rejected, total: errors + timeouts + success + rejected };
    let w = this.windows.get(cluster);
    if (!w) {
      const fill = (v: number) => new Array<number>(this.numBuckets + 1).fill(v);
      w = { success: fill(success), errors: fill(errors), timeouts: fill(timeouts), rejected: fill(rejected), total: fill(now.total) };
      this.windows.set(cluster, w);
    }
    const rolling = {} as Record<keyof Windows, number>;
    for (const key of Object.keys(now) as (keyof Windows)[]) {
      const window = w[key];
      window.push(now[key]);
      window.shift();
      // A counter that went backwards (reset) counts 0 until the window has passed.
      rolling[key] = Math.max(0, window[window.length - 1]! - window[0]!);
    }
    return rolling;
  }

  private latency(cluster: string): string {
    const h = this.merged.histograms.get(`cluster.${cluster}.upstream_rq_time`);
    const values = h ? quantiles(h.interval, LATENCY_QUANTILES) : LATENCY_QUANTILES.map(() => NaN);
    const pairs: string[] = [];
    LATENCY_QUANTILES.forEach((q, i) => {
      if (!Number.isNaN(values[i])) pairs.push(`"${Number((q * 100).toPrecision(6))}": ${values[i]!.toFixed(6)}`);
    });
    return `{${pairs.join(', ')}}`;
  }

  /** One flush's records for every cluster, then the keep-alive comment. */
  render(): string {
    const windowMs = this.flushIntervalMs;
    let out = '';
    for (const c of this.clusters) {
      const name = c.name ?? '';
      const r = this.roll(name);
      const maxPending = thresholds(c, 'DEFAULT').max_pending_requests;
      const hosts = this.merged.gauges.get(`cluster.${name}.membership_total`);
      const reporting = hosts ? Math.max(0, ...hosts.bySource.values()) : 0;
      const errorPercentage = r.total === 0 ? 0 : Math.floor((100 * (r.errors + r.timeouts + r.rejected)) / r.total);
      const command = members([
        ['type', 'HystrixCommand'], ['name', name], ['group', 'NA'], ['currentTime', Math.floor(Date.now() / 1000)], ['isCircuitBreakerOpen', false],
        ['errorPercentage', errorPercentage], ['errorCount', r.errors], ['requestCount', r.total], ['rollingCountCollapsedRequests', 0],
        ['rollingCountExceptionsThrown', 0], ['rollingCountFailure', r.errors], ['rollingCountFallbackFailure', 0], ['rollingCountFallbackRejection', 0],
        ['rollingCountFallbackSuccess', 0], ['rollingCountResponsesFromCache', 0], ['rollingCountSemaphoreRejected', r.rejected],
        ['rollingCountShortCircuited', 0], ['rollingCountSuccess', r.success], ['rollingCountThreadPoolRejected', 0], ['rollingCountTimeout', r.timeouts],
        ['rollingCountBadRequests', 0], ['currentConcurrentExecutionCount', 0], ['latencyExecute_mean', 'null'],
      ]);
      const properties = members([
        ['propertyValue_circuitBreakerRequestVolumeThreshold', 0], ['propertyValue_circuitBreakerSleepWindowInMilliseconds', 0],
        ['propertyValue_circuitBreakerErrorThresholdPercentage', 0], ['propertyValue_circuitBreakerForceOpen', false],
        ['propertyValue_circuitBreakerForceClosed', true], ['propertyValue_executionIsolationStrategy', 'SEMAPHORE'],
        ['propertyValue_executionIsolationThreadTimeoutInMilliseconds', 0], ['propertyValue_executionIsolationThreadInterruptOnTimeout', false],
        ['propertyValue_executionIsolationSemaphoreMaxConcurrentRequests', maxPending], ['propertyValue_fallbackIsolationSemaphoreMaxConcurrentRequests', 0],
        ['propertyValue_requestCacheEnabled', false], ['propertyValue_requestLogEnabled', true], ['reportingHosts', reporting],
        ['propertyValue_metricsRollingStatisticalWindowInMilliseconds', windowMs],
      ]);
      out += `data: {${command}, "latencyExecute": ${this.latency(name)}, ${properties}}\n\n`;
      const pool = members([
        ['currentPoolSize', 0], ['rollingMaxActiveThreads', 0], ['currentActiveCount', 0], ['currentCompletedTaskCount', 0],
        ['propertyValue_queueSizeRejectionThreshold', maxPending], ['type', 'HystrixThreadPool'], ['reportingHosts', reporting],
        ['propertyValue_metricsRollingStatisticalWindowInMilliseconds', windowMs], ['name', name], ['currentLargestPoolSize', 0],
        ['currentCorePoolSize', 0], ['currentQueueSize', 0], ['currentTaskCount', 0], ['rollingCountThreadsExecuted', 0], ['currentMaximumPoolSize', 0],
      ]);
      out += `data: {${pool}}\n\n`;
    }
    return out + ':\n\n';
  }

  /** A stats flush happened: push to every open stream. */
  flushed(): void {
    if (this.streams.size === 0) return;
    const data = this.render();
    for (const s of this.streams) s.write(data);
  }
}

export function dashboardEndpoints(bootstrap: JsonObject, clusters: Cluster[], collector: StatsCollector): AdminEndpoint[] {
  const buckets = hystrixBuckets(bootstrap);
  if (buckets === undefined) return [];
  const hystrix = new HystrixStream(clusters, collector.merged, buckets, collector.flushIntervalMs);
  collector.onFlush(() => hystrix.flushed());
  return [
    {
      path: '/dashboard_event_stream',
      help: 'send hystrix event stream',
      mutates: false,
      handle: () => ({
        status: 200,
        contentType: 'text/event-stream',
        headers: {
          'cache-control': 'no-cache',
          connection: 'close',
          'access-control-allow-headers': 'Accept, Cache-Control, X-Requested-With, Last-Event-ID',
          'access-control-allow-origin': '*',
        },
        unchunked: true,
        body: hystrix.open(),
      }),
    },
  ];
}
