import { stats } from './stats/process.js';

/**
 * `--enable-mutex-tracing`, as it can mean in Node. Envoy counts how often a thread found an
 * absl::Mutex held and how long it waited. A Node process has no mutexes between its requests:
 * what makes a request wait is its event loop being busy with something else (a long
 * synchronous task, a large render, garbage collection). So each process of the tree measures
 * that: a 10 ms timer notes how late it fires. A wake-up more than 1 ms late is a contention,
 * and its lateness is the wait:
 *
 *   num_contentions       late wake-ups, over all processes
 *   current_wait_cycles   the latest late wake-up's delay in nanoseconds (the largest over the processes)
 *   lifetime_wait_cycles  the sum of all those delays in nanoseconds
 *
 * ("cycles" are nanoseconds here: Node exposes no CPU cycle counter.) The figures travel as
 * hidden stats (`_contention.*`), merged over the processes like any other.
 */

const INTERVAL_MS = 10;
const THRESHOLD_MS = 1;

export const CONTENTION_STATS = {
  count: '_contention.num_contentions',
  current: '_contention.current_wait_ns',
  lifetime: '_contention.lifetime_wait_ns',
} as const;

let timer: NodeJS.Timeout | undefined;

export function startContentionTracing(): void {
  if (timer) return;
  const count = stats.counter(CONTENTION_STATS.count);
  const current = stats.gauge(CONTENTION_STATS.current);
  const lifetime = stats.counter(CONTENTION_STATS.lifetime);
  let expected = performance.now() + INTERVAL_MS;
  timer = setInterval(() => {
    const now = performance.now();
    const lateMs = now - expected;
    expected = now + INTERVAL_MS;
    if (lateMs <= THRESHOLD_MS) return;
    const ns = Math.round(lateMs * 1e6);
    count.inc();
    current.set(ns);
    lifetime.inc(ns);
  }, INTERVAL_MS);
  timer.unref();
}
