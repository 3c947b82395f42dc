import { native } from './native/index.js';

/**
 * The workers' watchdog heartbeats (supervisor/watchdog.ts), in memory the supervisor and every
 * worker map (the addon's mapShared): one 32-bit counter per worker. A worker's event loop adds
 * one to its own every tick; the supervisor's watchdog reads them every tick, and a counter that
 * moved is a loop that turned, as Envoy's guard dog reads the counters its threads touch.
 *
 * They were IPC messages: by default ten a second from every worker (a tick is half the 200 ms
 * miss_timeout), each one serialised, written, read and decoded by the supervisor. That work
 * never stopped, so an idle tree was never idle. V8 optimised it after a minute or two, which
 * brought its optimising compiler into every process. The buffers it freed also filled the C
 * heap. scripts/bench/memory.ts measured a worker idle for two minutes at 52-56 MB with the
 * messages, and at 46.6-47.1 MB with ticks of 5 s.
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

  /** Worker `index`'s loop turned (the counter wraps: only a change counts). */
  beat(index: number): void {
    Atomics.add(this.counts, index, 1);
  }

  count(index: number): number {
    return Atomics.load(this.counts, index);
  }
}
