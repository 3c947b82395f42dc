import { Counter, Gauge, Histogram, StatsStore, TextReadout, type GaugeMode } from './store.js';

/**
 * This process's statistics (each process of the tree has its own; the admin process merges them).
 *
 * `PROXY_BENCH_STATS=off` in the environment makes every stat inert: for `npm run bench` to
 * measure what recording costs the data plane. It is a benchmark knob, not a product option.
 */

class InertStore extends StatsStore {
  private readonly scratch = new StatsStore();
  private readonly inertCounter = new (class extends Counter {
    override inc(): void {}
  })('inert', this.scratch);
  private readonly inertGauge = new (class extends Gauge {
    override set(): void {}
  })('inert', this.scratch, 'accumulate');
  private readonly inertHistogram = new (class extends Histogram {
    override record(): void {}
  })('inert', this.scratch);
  private readonly inertText = new (class extends TextReadout {
    override set(): void {}
  })('inert', this.scratch);

  override counter(): Counter {
    return this.inertCounter;
  }
  override gauge(_name?: string, _mode?: GaugeMode): Gauge {
    return this.inertGauge;
  }
  override histogram(): Histogram {
    return this.inertHistogram;
  }
  override textReadout(): TextReadout {
    return this.inertText;
  }
}

export const stats: StatsStore = process.env.PROXY_BENCH_STATS === 'off' ? new InertStore() : new StatsStore();
