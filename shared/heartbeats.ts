import { native, type TickerHandle } from './native/index.js';

/**
 * The workers' watchdog heartbeats (supervisor/watchdog.ts), in memory the supervisor and every
 * worker map (the addon's mapShared): one 32-bit counter per worker. A worker's event loop adds
 * one to its own every tick; the supervisor's watchdog reads them every tick, and a counter that
 * moved is a loop that turned, as Envoy's guard dog reads the counters its threads touch.
 *
 * They were IPC messages: by default ten a second from every worker (a tick is half the 200 ms
 * miss_timeout), each one serialised, written, read and decoded by the supervisor, without end.
 * Measured on the bench bootstrap, an idle worker's C heap grew to 4.5-7.4 MB within minutes
 * with the messages (its free pages given back by shared/idle-housekeeping.ts or not). With the counters
 * it stayed at 1.7-1.9 MB over three minutes.
 *
 * Both sides tick in C (the addon's tickers, shared/native/tickers.c), not in JavaScript: a
 * JavaScript timer ten times a second kept an idle process's JavaScript running until V8 had
 * optimised it, and its optimising compiler stayed resident from then on.
 */
export class Heartbeats {
  private readonly counts: Int32Array;

  constructor(
    buffer: ArrayBuffer,
    readonly workers: number,
  ) {
    this.counts = new Int32Array(buffer, 0, workers);
  }

  static bytes(workers: number): number {
    return Math.max(4, workers * 4);
  }

  /** Opens the region a worker inherited (`/proc/self/fd/<fd>`). */
  static open(fd: number, workers: number): Heartbeats {
    return new Heartbeats(native.mapShared(`/proc/self/fd/${fd}`, Heartbeats.bytes(workers), false), workers);
  }

  /** Worker `index`'s loop adds one to its counter every `intervalMs` from now on, in C (the counter wraps: only a change counts); stopped by native.stopTicker. */
  beatEvery(index: number, intervalMs: number): TickerHandle {
    return native.startTicker({ intervalMs, beat: this.counts.subarray(index, index + 1) });
  }

  /** The counters themselves, for a ticker that watches them. */
  get counters(): Int32Array {
    return this.counts;
  }

  count(index: number): number {
    return Atomics.load(this.counts, index);
  }
}
