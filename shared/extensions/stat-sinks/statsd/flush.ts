import { gaugeDisplayValue, type MergedStats } from '../../../stats/merged.js';
import { openStatsdSinks, sentToSinks, statsdLine, type StatsdSink } from './statsd.js';
import type { JsonObject } from '../../../config/proto-json.js';

/**
 * The flush half of the statsd and DogStatsD sinks (./statsd.ts): the admin process
 * holds every process's figures, so at each flush (stats_flush_interval, or each admin read with
 * stats_flush_on_admin) it sends the tree's counters and gauges, as Envoy's sink does from its
 * flush snapshot:
 * - counters that were ever incremented: `<prefix>.<name>:<increase since the last flush>|c`;
 * - gauges that were ever set: `<prefix>.<name>:<value>|g` (a 64-bit version hash exactly).
 * Histogram samples are not here: each process sends its own as it records them.
 */
export class StatsdSinks {
  private readonly sinks: StatsdSink[];
  /** Each counter's value at the last flush: what was sent is the increase since. */
  private readonly lastCounters = new Map<string, number>();

  constructor(bootstrap: JsonObject) {
    this.sinks = openStatsdSinks(bootstrap);
  }

  get empty(): boolean {
    return this.sinks.length === 0;
  }

  /** A flush completed: every sink gets the counters' increases and the gauges. */
  flush(merged: MergedStats): void {
    if (this.sinks.length === 0) return;
    const counters: [string, number][] = [];
    for (const [name, c] of merged.counters) {
      if (!c.used || !sentToSinks(name)) continue;
      const last = this.lastCounters.get(name) ?? 0;
      counters.push([name, c.value >= last ? c.value - last : c.value]);
      this.lastCounters.set(name, c.value);
    }
    const gauges: [string, number | bigint][] = [];
    for (const [name, g] of merged.gauges) if (g.used && sentToSinks(name)) gauges.push([name, gaugeDisplayValue(g)]);
    for (const sink of this.sinks) {
      const lines = [...counters.map(([n, v]) => statsdLine(sink, n, v, 'c')), ...gauges.map(([n, v]) => statsdLine(sink, n, v, 'g'))];
      this.send(sink, lines, sink.maxBytes);
    }
  }

  private send(sink: StatsdSink, lines: string[], maxBytes: number): void {
    if (sink.stream) {
      if (lines.length) sink.send(lines.join('\n'));
      return;
    }
    let batch = '';
    const flushBatch = () => {
      if (batch) sink.send(batch);
      batch = '';
    };
    for (const l of lines) {
      if (maxBytes <= 0 || l.length >= maxBytes) {
        flushBatch();
        sink.send(l);
        continue;
      }
      if (batch && batch.length + 1 + l.length > maxBytes) flushBatch();
      batch = batch ? `${batch}\n${l}` : l;
    }
    flushBatch();
  }

  close(): void {
    for (const s of this.sinks) s.close();
  }
}
