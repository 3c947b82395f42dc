import type { Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { dgramModule } from '../shared/builtins.js';
import { list, obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { typeNameOfUrl } from '../shared/config/wkt.js';
import { getLogger } from '../shared/log/logger.js';
import { binBounds } from '../shared/stats/histogram.js';
import { gaugeDisplayValue, type MergedStats } from '../shared/stats/merged.js';
import { extractTags } from './render/stats-prometheus.js';

/**
 * `envoy.stat_sinks.statsd` and `envoy.stat_sinks.dog_statsd`, for the whole tree from one place:
 * the admin process holds every process's statistics, so at each flush (stats_flush_interval, or
 * each admin read with stats_flush_on_admin) it sends them over UDP in Envoy's line formats:
 * - counters that were ever incremented: `<prefix>.<name>:<increase since the last flush>|c`;
 * - gauges that were ever set: `<prefix>.<name>:<value>|g`;
 * - histogram samples: `<prefix>.<name>:<value>|ms`, one line per sample of the interval just
 *   completed (Envoy sends each when it is recorded; here the workers' samples reach one place at
 *   the flush, at their histogram bins' resolution: two significant digits).
 * statsd uses the full name and sends a datagram per line. DogStatsD uses the tag-extracted name
 * with the tags after the type (`|#envoy.cluster_name:foo,…`), and packs lines, separated by
 * newlines, into datagrams of up to `max_bytes_per_datagram` (unset: one line each).
 */

const log = getLogger('admin', import.meta.url);
const STATSD = 'envoy.config.metrics.v3.StatsdSink';
const DOG_STATSD = 'envoy.config.metrics.v3.DogStatsdSink';

interface Sink {
  prefix: string;
  tagged: boolean;
  maxBytes: number;
  host: string;
  port: number;
  socket: Socket;
}

export class StatsdSinks {
  private readonly sinks: Sink[] = [];
  /** Each counter's value at the last flush: what was sent is the increase since. */
  private readonly lastCounters = new Map<string, number>();

  constructor(bootstrap: JsonObject) {
    for (const s of list(bootstrap.stats_sinks)) {
      const config = obj(s.typed_config);
      const type = typeNameOfUrl(String(config['@type'] ?? ''));
      const byName = s.name === 'envoy.stat_sinks.statsd' || s.name === 'envoy.stat_sinks.dog_statsd';
      if (type !== STATSD && type !== DOG_STATSD && !byName) continue;
      const sa = obj(obj(config.address).socket_address);
      const host = String(sa.address);
      const socket = dgramModule().createSocket(isIPv6(host) ? 'udp6' : 'udp4');
      socket.on('error', (err) => log.debug(`stats sink ${host}:${String(sa.port_value)}: ${err.message}`));
      socket.unref();
      const tagged = type === DOG_STATSD || s.name === 'envoy.stat_sinks.dog_statsd';
      this.sinks.push({
        prefix: typeof config.prefix === 'string' && config.prefix ? config.prefix : 'envoy',
        tagged,
        maxBytes: tagged && typeof config.max_bytes_per_datagram === 'number' ? config.max_bytes_per_datagram : 0,
        host,
        port: Number(sa.port_value),
        socket,
      });
    }
  }

  get empty(): boolean {
    return this.sinks.length === 0;
  }

  /** A flush completed: every sink gets the counters' increases, the gauges and the interval's samples. */
  flush(merged: MergedStats): void {
    if (this.sinks.length === 0) return;
    const counters: [string, number][] = [];
    for (const [name, c] of merged.counters) {
      if (!c.used) continue;
      const last = this.lastCounters.get(name) ?? 0;
      counters.push([name, c.value >= last ? c.value - last : c.value]);
      this.lastCounters.set(name, c.value);
    }
    const gauges: [string, number | bigint][] = [];
    for (const [name, g] of merged.gauges) if (g.used) gauges.push([name, gaugeDisplayValue(g)]);
    const samples: [string, number][] = [];
    for (const [name, h] of merged.histograms) {
      for (const [bin, count] of h.interval) for (let i = 0; i < count; i++) samples.push([name, binBounds(bin).lower]);
    }
    for (const sink of this.sinks) {
      const line = (name: string, value: number | bigint, type: string) => {
        if (!sink.tagged) return `${sink.prefix}.${name}:${value}|${type}`;
        const { extracted, tags } = extractTags(name);
        return `${sink.prefix}.${extracted}:${value}|${type}${tags.length ? `|#${tags.map(([k, v]) => `${k}:${v}`).join(',')}` : ''}`;
      };
      const lines = [...counters.map(([n, v]) => line(n, v, 'c')), ...gauges.map(([n, v]) => line(n, v, 'g'))];
      this.send(sink, lines, sink.maxBytes);
      // Histogram samples go one to a datagram, as Envoy sends each when it is recorded.
      this.send(sink, samples.map(([n, v]) => line(n, v, 'ms')), 0);
    }
  }

  private send(sink: Sink, lines: string[], maxBytes: number): void {
    let batch = '';
    const flushBatch = () => {
      if (batch) sink.socket.send(batch, sink.port, sink.host);
      batch = '';
    };
    for (const l of lines) {
      if (maxBytes <= 0 || l.length >= maxBytes) {
        flushBatch();
        sink.socket.send(l, sink.port, sink.host);
        continue;
      }
      if (batch && batch.length + 1 + l.length > maxBytes) flushBatch();
      batch = batch ? `${batch}\n${l}` : l;
    }
    flushBatch();
  }

  close(): void {
    for (const s of this.sinks) s.socket.close();
  }
}
