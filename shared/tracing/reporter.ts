import { runtimeValue } from '../runtime.js';
import type { Counter } from '../stats/store.js';
import type { Span } from './span.js';

/**
 * Finished spans on their way to a collector, as Envoy's tracers batch them: a batch goes once it
 * has `tracing.<tracer>.min_flush_spans` spans (default 5), and every
 * `tracing.<tracer>.flush_interval_ms` (default 5000) whatever is there (timer_flushed). Sending
 * is asynchronous and never holds a request. While a batch is out, spans wait; past MAX_PENDING of
 * them (a slow or absent collector), further spans are dropped and counted (spans_dropped), so
 * memory never grows without bound.
 */

const MAX_PENDING = 10_000;

export interface ReporterStats {
  spansSent: Counter;
  timerFlushed: Counter;
  spansDropped: Counter;
}

export class SpanReporter {
  private pending: Span[] = [];
  private sending = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    /** `zipkin` or `opentelemetry`: the runtime keys' and stats' middle name. */
    private readonly name: string,
    private readonly stats: ReporterStats,
    /** Sends one batch; resolves when it has been answered (or has failed: the sender counts that). */
    private readonly send: (spans: Span[]) => Promise<void>,
  ) {
    const interval = Number(runtimeValue(`tracing.${name}.flush_interval_ms`) ?? 5000) || 5000;
    this.timer = setInterval(() => {
      if (this.pending.length === 0) return;
      this.stats.timerFlushed.inc();
      this.flush();
    }, interval);
    this.timer.unref();
  }

  private get minFlush(): number {
    return Math.max(1, Number(runtimeValue(`tracing.${this.name}.min_flush_spans`) ?? 5) || 5);
  }

  report(span: Span): void {
    if (this.pending.length >= MAX_PENDING) {
      this.stats.spansDropped.inc();
      return;
    }
    this.pending.push(span);
    if (this.pending.length >= this.minFlush) this.flush();
  }

  private flush(): void {
    if (this.sending || this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.sending = true;
    this.stats.spansSent.inc(batch.length);
    void this.send(batch).finally(() => {
      this.sending = false;
      if (this.pending.length >= this.minFlush) this.flush();
    });
  }

  close(): void {
    clearInterval(this.timer);
  }
}
