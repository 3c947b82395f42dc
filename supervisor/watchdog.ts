import type { Worker } from 'node:worker_threads';
import { workerThreadsModule } from '../shared/builtins.js';
import { obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { durationMs } from '../shared/config/wkt.js';
import { getLogger } from '../shared/log/logger.js';
import { stats } from '../shared/stats/process.js';
import type { Counter } from '../shared/stats/store.js';
import type { Heartbeats } from '../shared/heartbeats.js';
import { native, type TickerHandle } from '../shared/native/index.js';

const log = getLogger('main', import.meta.url);

/**
 * Envoy's watchdogs (Bootstrap.watchdogs, or the deprecated `watchdog` for both), on the tree:
 *
 * - **Workers.** Each worker's event loop moves its heartbeat counter every tick (in memory shared
 *   with the supervisor: shared/heartbeats.ts); the supervisor reads them every tick. Both tick in
 *   C (the addon's tickers), so that an idle tree runs no JavaScript for its watchdogs. A worker
 *   silent past `miss_timeout` (200 ms by default) counts once in `server.watchdog_miss` and
 *   `server.workers.watchdog_miss`, past `megamiss_timeout` (1 s) in
 *   `…watchdog_mega_miss`. Past `kill_timeout` it is killed and replaced (Envoy kills itself; a
 *   tree replaces the worker and keeps its sockets). When at least max(2, `multikill_threshold` %
 *   of the workers) are silent past `multikill_timeout`, every one of them is replaced.
 * - **The supervisor's own loop** (`main_thread.*`): a late tick counts as a miss or megamiss. With
 *   a `kill_timeout` (or `multikill_timeout`, the only thread), a helper thread watches the loop and
 *   aborts the supervisor, as Envoy's guard dog aborts Envoy (the children follow it).
 */

export interface WatchdogConfig {
  missMs: number;
  megamissMs: number;
  killMs: number;
  multikillMs: number;
  /** multikill_threshold, in percent of the watched loops. */
  multikillThreshold: number;
}

function configOf(w: unknown): WatchdogConfig {
  const c = obj(w);
  const ms = (v: unknown, fallback: number) => (typeof v === 'string' ? durationMs(v) : fallback);
  return {
    missMs: ms(c.miss_timeout, 200),
    megamissMs: ms(c.megamiss_timeout, 1000),
    killMs: ms(c.kill_timeout, 0),
    multikillMs: ms(c.multikill_timeout, 0),
    multikillThreshold: Number(obj(c.multikill_threshold).value ?? 0),
  };
}

/** The main thread's and the workers' configurations (Envoy's defaults when none is given). */
export function watchdogConfigs(bootstrap: JsonObject): { main: WatchdogConfig; workers: WatchdogConfig } {
  if (bootstrap.watchdogs !== undefined) {
    const w = obj(bootstrap.watchdogs);
    return { main: configOf(w.main_thread_watchdog), workers: configOf(w.worker_watchdog) };
  }
  return { main: configOf(bootstrap.watchdog), workers: configOf(bootstrap.watchdog) };
}

/** How often a loop touches its watchdog and the watchdog looks: half the shortest timeout set (every second when none is: nothing can be late then). */
export function tickMs(c: WatchdogConfig): number {
  const shortest = Math.min(...[c.missMs, c.megamissMs, c.killMs, c.multikillMs].filter((t) => t > 0));
  return Number.isFinite(shortest) ? Math.max(10, Math.floor(shortest / 2)) : 1000;
}

/** One watched loop's alerts: counted once per episode of lateness. */
interface Dog {
  missAlerted: boolean;
  megaAlerted: boolean;
}

class Alerts {
  private readonly miss: Counter[];
  private readonly mega: Counter[];
  constructor(scope: string) {
    this.miss = [stats.counter('server.watchdog_miss'), stats.counter(`server.${scope}.watchdog_miss`)];
    this.mega = [stats.counter('server.watchdog_mega_miss'), stats.counter(`server.${scope}.watchdog_mega_miss`)];
  }

  /** A loop `lateMs` behind: counted once per episode in each family. */
  check(dog: Dog, lateMs: number, c: WatchdogConfig): void {
    if (lateMs > c.missMs && !dog.missAlerted) {
      dog.missAlerted = true;
      for (const m of this.miss) m.inc();
    }
    if (lateMs > c.megamissMs && !dog.megaAlerted) {
      dog.megaAlerted = true;
      for (const m of this.mega) m.inc();
    }
  }
}

/** The shortest timeout set: lateness below it needs nothing done. */
function firstThresholdMs(c: WatchdogConfig): number {
  return Math.min(...[c.missMs, c.megamissMs, c.killMs, c.multikillMs].filter((t) => t > 0));
}

export class WorkerWatchdog {
  private readonly dogs: Dog[];
  private readonly alerts = new Alerts('workers');
  private readonly ticker: TickerHandle;
  readonly tickMs: number;
  /** Each worker's counter as last read, and when it last moved (0: not watched: start-up is not, a replacement's watch begins when its own counter moves). Written by the ticker. */
  private readonly seen: Int32Array;
  private readonly last: Float64Array;

  constructor(
    private readonly config: WatchdogConfig,
    /** The workers' counters (shared/heartbeats.ts). */
    private readonly beats: Heartbeats,
    /** Kills worker `index` (its replacement follows, as after any crash). */
    private readonly kill: (index: number) => void,
  ) {
    this.tickMs = tickMs(config);
    this.dogs = Array.from({ length: beats.workers }, () => ({ missAlerted: false, megaAlerted: false }));
    this.seen = Int32Array.from({ length: beats.workers }, (_, i) => beats.count(i));
    this.last = new Float64Array(beats.workers);
    // The counters are read in C every tick; this process's JavaScript runs only when a worker is late.
    this.ticker = native.startTicker({ intervalMs: this.tickMs, thresholdMs: firstThresholdMs(config), counts: beats.counters, seen: this.seen, last: this.last }, (now) => this.check(now));
  }

  /** The worker exited: its replacement is watched from its own first heartbeat. */
  forget(index: number): void {
    this.last[index] = 0;
    this.seen[index] = this.beats.count(index);
  }

  /** Some worker is late (or was at the last tick): `now` on the ticker's clock. */
  private check(now: number): void {
    const c = this.config;
    const threshold = firstThresholdMs(c);
    const stuck: number[] = [];
    let watched = 0;
    for (let index = 0; index < this.last.length; index++) {
      const last = this.last[index]!;
      if (last === 0) continue;
      watched++;
      const dog = this.dogs[index]!;
      const late = now - last;
      if (late <= threshold) {
        dog.missAlerted = dog.megaAlerted = false;
        continue;
      }
      this.alerts.check(dog, late, c);
      if (c.killMs > 0 && late > c.killMs) {
        log.critical(`worker_${index}'s event loop has not turned for ${Math.round(late)} ms (kill_timeout ${c.killMs} ms): killing it; it will be replaced`);
        this.replace(index);
      } else if (c.multikillMs > 0 && late > c.multikillMs) stuck.push(index);
    }
    const required = Math.max(2, Math.ceil((c.multikillThreshold / 100) * watched));
    if (stuck.length >= required) {
      log.critical(`${stuck.length} workers' event loops have not turned for ${c.multikillMs} ms (multikill_timeout): killing them; they will be replaced`);
      for (const index of stuck) this.replace(index);
    }
  }

  private replace(index: number): void {
    this.last[index] = 0;
    this.dogs[index] = { missAlerted: false, megaAlerted: false };
    this.kill(index);
  }

  close(): void {
    native.stopTicker(this.ticker);
  }
}

/**
 * The supervisor's own loop: misses counted when a late tick runs; with a kill or multikill
 * timeout, a helper thread that aborts the process if the loop stops turning for that long.
 */
export class MainThreadWatchdog {
  private readonly ticker: TickerHandle;
  private readonly dog: Dog = { missAlerted: false, megaAlerted: false };
  private readonly alerts = new Alerts('main_thread');
  private readonly guard: Worker | undefined;

  constructor(config: WatchdogConfig) {
    const tick = tickMs(config);
    // A single thread: multikill needs two, so only kill_timeout can abort (Envoy counts threads the same way).
    const abortMs = config.killMs;
    let stamp: Float64Array | undefined;
    if (abortMs > 0) {
      stamp = new Float64Array(new SharedArrayBuffer(8));
      stamp[0] = Date.now();
      this.guard = new (workerThreadsModule().Worker)(GUARD_SOURCE, { eval: true, workerData: { beat: stamp, abortMs, tick } });
      this.guard.unref();
    }
    // The tick runs in C; a tick later than a miss calls back, and each late tick counts (as a JavaScript timer's did).
    this.ticker = native.startTicker({ intervalMs: tick, thresholdMs: Math.min(...[config.missMs, config.megamissMs].filter((t) => t > 0)), ...(stamp ? { stamp } : {}) }, (_now, ownLate) => {
      this.alerts.check(this.dog, ownLate, config);
      this.dog.missAlerted = this.dog.megaAlerted = false;
    });
  }

  close(): void {
    native.stopTicker(this.ticker);
    void this.guard?.terminate();
  }
}

/** The helper thread: reads the loop's last beat; too old, it aborts the process (SIGABRT, as Envoy's panic). */
const GUARD_SOURCE = `
const { workerData } = require('node:worker_threads');
const { beat, abortMs, tick } = workerData;
setInterval(() => {
  const late = Date.now() - beat[0];
  if (late > abortMs) {
    process._rawDebug('watchdog: the supervisor event loop has not turned for ' + late + ' ms (kill_timeout ' + abortMs + ' ms): aborting');
    process.kill(process.pid, 'SIGABRT');
  }
}, tick);
`;
