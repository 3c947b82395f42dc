import type { Worker } from 'node:worker_threads';
import { workerThreadsModule } from '../shared/builtins.js';
import { obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { durationMs } from '../shared/config/wkt.js';
import { getLogger } from '../shared/log/logger.js';
import { stats } from '../shared/stats/process.js';
import type { Counter } from '../shared/stats/store.js';
import type { Heartbeats } from '../shared/heartbeats.js';

const log = getLogger('main', import.meta.url);

/**
 * Envoy's watchdogs (Bootstrap.watchdogs, or the deprecated `watchdog` for both), on the tree:
 *
 * - **Workers.** Each worker's event loop moves its heartbeat counter every tick (in memory shared
 *   with the supervisor: shared/heartbeats.ts); the supervisor reads them every tick. A worker
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

/** How often a loop touches its watchdog and the watchdog looks: half the shortest timeout set. */
export function tickMs(c: WatchdogConfig): number {
  return Math.max(10, Math.floor(Math.min(...[c.missMs, c.megamissMs, c.killMs, c.multikillMs].filter((t) => t > 0)) / 2));
}

interface Dog {
  last: number;
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

export class WorkerWatchdog {
  private readonly dogs = new Map<number, Dog>();
  private readonly alerts = new Alerts('workers');
  private readonly timer: NodeJS.Timeout;
  readonly tickMs: number;
  /** Each worker's counter as last read: a replacement's watch begins when its own moves it. */
  private readonly seen: number[];

  constructor(
    private readonly config: WatchdogConfig,
    /** The workers' counters (shared/heartbeats.ts). */
    private readonly beats: Heartbeats,
    /** Kills worker `index` (its replacement follows, as after any crash). */
    private readonly kill: (index: number) => void,
  ) {
    this.tickMs = tickMs(config);
    this.seen = Array.from({ length: beats.workers }, (_, i) => beats.count(i));
    this.timer = setInterval(() => this.check(), this.tickMs);
    this.timer.unref();
  }

  /** Worker `index`'s loop turned. Its watch begins with its first heartbeat (start-up is not watched). */
  private heartbeat(index: number, now: number): void {
    const dog = this.dogs.get(index);
    if (dog) {
      dog.last = now;
      dog.missAlerted = dog.megaAlerted = false;
    } else this.dogs.set(index, { last: now, missAlerted: false, megaAlerted: false });
  }

  /** The worker exited: its replacement is watched from its own first heartbeat. */
  forget(index: number): void {
    this.dogs.delete(index);
    this.seen[index] = this.beats.count(index);
  }

  private check(): void {
    const now = performance.now();
    for (let i = 0; i < this.seen.length; i++) {
      const count = this.beats.count(i);
      if (count !== this.seen[i]) {
        this.seen[i] = count;
        this.heartbeat(i, now);
      }
    }
    const c = this.config;
    const stuck: number[] = [];
    for (const [index, dog] of this.dogs) {
      const late = now - dog.last;
      this.alerts.check(dog, late, c);
      if (c.killMs > 0 && late > c.killMs) {
        log.critical(`worker_${index}'s event loop has not turned for ${Math.round(late)} ms (kill_timeout ${c.killMs} ms): killing it; it will be replaced`);
        this.replace(index);
      } else if (c.multikillMs > 0 && late > c.multikillMs) stuck.push(index);
    }
    const required = Math.max(2, Math.ceil((c.multikillThreshold / 100) * this.dogs.size));
    if (stuck.length >= required) {
      log.critical(`${stuck.length} workers' event loops have not turned for ${c.multikillMs} ms (multikill_timeout): killing them; they will be replaced`);
      for (const index of stuck) this.replace(index);
    }
  }

  private replace(index: number): void {
    this.dogs.delete(index);
    this.kill(index);
  }

  close(): void {
    clearInterval(this.timer);
  }
}

/**
 * The supervisor's own loop: misses counted when a late tick runs; with a kill or multikill
 * timeout, a helper thread that aborts the process if the loop stops turning for that long.
 */
export class MainThreadWatchdog {
  private readonly timer: NodeJS.Timeout;
  private readonly dog: Dog = { last: performance.now(), missAlerted: false, megaAlerted: false };
  private readonly alerts = new Alerts('main_thread');
  private readonly guard: Worker | undefined;
  private readonly beat: Float64Array | undefined;

  constructor(config: WatchdogConfig) {
    const tick = tickMs(config);
    // A single thread: multikill needs two, so only kill_timeout can abort (Envoy counts threads the same way).
    const abortMs = config.killMs;
    if (abortMs > 0) {
      this.beat = new Float64Array(new SharedArrayBuffer(8));
      this.beat[0] = Date.now();
      this.guard = new (workerThreadsModule().Worker)(GUARD_SOURCE, { eval: true, workerData: { beat: this.beat, abortMs, tick } });
      this.guard.unref();
    }
    this.timer = setInterval(() => {
      const now = performance.now();
      this.alerts.check(this.dog, now - this.dog.last - tick, config);
      this.dog.last = now;
      this.dog.missAlerted = this.dog.megaAlerted = false;
      if (this.beat) this.beat[0] = Date.now();
    }, tick);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
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
