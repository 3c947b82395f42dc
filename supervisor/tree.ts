import type { LoadedBootstrap } from '../shared/config/bootstrap.js';
import type { DrainOrder, FromAdmin, FromWorker, HotRestartStatus, LogLevelChange, LogSettingsMessage, ServerContext, ServerState, ToAdmin, ToWorker } from '../shared/ipc.js';
import { applyLogLevelChange, getLogger, reopenLogs } from '../shared/log/logger.js';
import type { ProfilerOutcome } from '../shared/profiler.js';
import { MergedStats } from '../shared/stats/merged.js';
import { stats } from '../shared/stats/process.js';
import { hotRestartVersion, versionString } from '../shared/version.js';
import { ManagedChild } from './children.js';
import { commandLineOptionsJson } from './command-line-json.js';
import type { ListenerSocketRegistry } from './listeners.js';
import type { Options } from './options.js';
import { RuntimeLayers, RuntimeModifyError } from './runtime-layers.js';
import { profilePathOf, TreeProfiling } from './profiling.js';
import { ServerStats } from './server-stats.js';
import { StatsRelay } from './stats-relay.js';
import { BreakerGauges } from './upstream/breaker-gauges.js';
import { UpstreamMembership } from './upstream/membership.js';
import { BreakerCounts, regionBytes } from '../shared/upstream/breaker-counts.js';
import { native } from '../shared/native/index.js';
import { sharedMemoryDir } from './hot-restart/shared-memory.js';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { list, obj } from '../shared/config/access.js';
import type { StatsDelta } from '../shared/stats/store.js';

/**
 * One epoch's process tree: the admin process and the workers, forked with the listening
 * sockets, replaced when they crash, and stopped together. The tree is LIVE once every worker
 * serves its listeners; a failure before that (a worker or the admin process cannot start)
 * stops the tree with status 1.
 */

const log = getLogger('main', import.meta.url);

/** How long requests in flight may take to finish when the tree is asked to stop. */
export const SHUTDOWN_GRACE_MS = 5000;
/**
 * The circuit-breaker region: created and sized in /dev/shm, kept open as a descriptor the workers
 * inherit, and unlinked at once, so nothing is left behind however the tree ends.
 */
function createBreakerRegion(clusters: string[], workers: number): { counts: BreakerCounts; fd: number } {
  const path = join(sharedMemoryDir(), `proxy_breakers_${process.pid}_${randomBytes(4).toString('hex')}`);
  const layout = { clusters, workers };
  const counts = new BreakerCounts(native.mapShared(path, regionBytes(layout), true), layout);
  const fd = openSync(path, 'r+');
  unlinkSync(path);
  return { counts, fd };
}

/** At the latest, the admin process starts this long after the workers (see start()). */
const ADMIN_START_DELAY_MS = 1000;

export class ProcessTree {
  private readonly workers: ManagedChild<FromWorker>[] = [];
  private admin: ManagedChild<FromAdmin> | undefined;
  private readonly context: ServerContext;
  private state: ServerState = 'PRE_INITIALIZING';
  private readonly readyWorkers = new Set<number>();
  private adminReady = false;
  private stopping: Promise<void> | undefined;
  private exitCode = 0;
  private resolveDone!: (code: number) => void;
  readonly statsRelay = new StatsRelay(
    () => this.workers,
    (m) => this.deliverStats(m),
    () => {
      this.serverStats.refresh(this.state, this.context.healthCheckFailing);
      this.breakerGauges.refresh();
    },
  );
  /**
   * After a hot-restart child took the admin interface: the tree's figures, merged here for the
   * child's stats requests (counter deltas since the last request, gauges as sums).
   */
  private localStats: { merged: MergedStats; exported: Map<string, number>; waiting: Map<number, () => void>; nextId: number } | undefined;
  private readonly serverStats: ServerStats;
  /** The circuit-breaker counts every worker maps; a dead worker's are zeroed before its replacement. */
  private readonly breakers: BreakerCounts;
  private readonly breakerFd: number;
  private readonly breakerGauges: BreakerGauges;
  /** Every cluster's hosts and their health, for the whole tree. */
  readonly membership: UpstreamMembership;
  private readonly runtime: RuntimeLayers;
  private readonly listenersStopped = stats.counter('listener_manager.listener_stopped');
  private nextAck = 1;
  private readonly pendingAcks = new Map<number, { waiting: Set<number>; results: ProfilerOutcome[]; done: () => void }>();
  private readonly profiling: TreeProfiling;
  /** POST /logging changes so far, replayed to a replacement child after its init. */
  private readonly logLevelChanges: LogLevelChange[] = [];
  /** Resolves with the process exit status once the whole tree has stopped. */
  readonly done = new Promise<number>((resolve) => (this.resolveDone = resolve));

  constructor(
    private readonly options: Options,
    loaded: LoadedBootstrap,
    private readonly sockets: ListenerSocketRegistry,
    logSettings: LogSettingsMessage,
  ) {
    const now = Date.now();
    const node = (loaded.bootstrap.node ?? {}) as { cluster?: string };
    this.runtime = new RuntimeLayers(loaded.bootstrap, options.serviceCluster || node.cluster || '', () => this.broadcastRuntime());
    this.context = {
      bootstrap: loaded.bootstrap,
      listeners: sockets.childView(),
      localAddressIpVersion: options.localAddressIpVersion,
      restartEpoch: options.restartEpoch,
      concurrency: options.concurrency,
      startTimeMs: now,
      originalStartTimeMs: now,
      logSettings,
      healthCheckFailing: false,
      statsLookupTracking: false,
      runtime: this.runtime.snapshot(),
      drains: [],
      enableMutexTracing: options.enableMutexTracing,
      profilePath: profilePathOf(loaded.bootstrap),
      profilers: [],
      taps: [],
      upstream: {},
      breakers: { layout: { clusters: [], workers: 0 }, childFd: -1 },
      tls: loaded.tls,
    };
    const breakers = createBreakerRegion(list(obj(loaded.bootstrap.static_resources).clusters).map((c) => String(c.name)), options.concurrency);
    this.breakers = breakers.counts;
    this.breakerFd = breakers.fd;
    this.context.breakers = { layout: breakers.counts.layout, childFd: 4 + sockets.listeners.length };
    this.breakerGauges = new BreakerGauges(list(obj(loaded.bootstrap.static_resources).clusters), breakers.counts);
    this.membership = new UpstreamMembership(list(obj(loaded.bootstrap.static_resources).clusters), (cluster, hosts) => {
      this.context.upstream[cluster] = hosts;
      for (const w of this.workers) w.send<ToWorker>({ type: 'hosts', cluster, hosts });
    }, loaded.tls.clusters);
    this.profiling = new TreeProfiling(this.context, (make, only) => this.toWorkers(make, only));
    this.serverStats = new ServerStats(now, options.concurrency, options.restartEpoch, versionString(), loaded.unknownFields.length, loaded.tls);
  }

  start(): void {
    this.state = 'INITIALIZING';
    const descriptors = () => this.sockets.descriptors();
    if (!this.hasAdmin) log.info('no admin address configured: not starting the admin process');
    // The admin process starts once every worker serves — on a hot restart the workers' start is
    // the hand-over time, and an admin process starting beside them on the same cores made it
    // longer — or after ADMIN_START_DELAY_MS, so that a slow start (DNS clusters) can be watched.
    else setTimeout(() => this.startAdmin(), ADMIN_START_DELAY_MS).unref();
    // As Envoy initializes its clusters before its workers serve: DNS clusters resolve first.
    void this.membership.start().then(() => {
      if (!this.stopping) this.startWorkers(descriptors);
    });
  }

  private startWorkers(listenerDescriptors: () => (number | 'ignore')[]): void {
    const descriptors = () => [...listenerDescriptors(), this.breakerFd];
    for (let i = 0; i < this.options.concurrency; i++) {
      const worker = new ManagedChild<FromWorker>({
        role: 'worker',
        name: `worker_${i}`,
        descriptors,
        onStart: (child) => {
          child.send<ToWorker>({ type: 'init', index: i, server: this.context });
          for (const change of this.logLevelChanges) child.send<ToWorker>({ type: 'log_levels', change });
        },
        onMessage: (m) => this.onWorkerMessage(m),
        onExit: () => {
          this.breakers.clearWorker(i);
          this.readyWorkers.delete(i);
          if (!this.stopping) this.reportUnready();
        },
      });
      this.workers.push(worker);
      worker.start();
    }
  }

  /** The admin process; `seed` (the figures so far) is given to its first start only. */
  private adminProcess(seed?: [string, StatsDelta][]): ManagedChild<FromAdmin> {
    return new ManagedChild<FromAdmin>({
      role: 'admin',
      name: 'admin',
      descriptors: () => [],
      onStart: (child) => {
        const sent =
          child.send<ToAdmin>({
            type: 'init',
            server: this.context,
            serverInfo: { version: versionString(), hotRestartVersion: hotRestartVersion(this.options.disableHotRestart), commandLineOptions: commandLineOptionsJson(this.options) },
            adminAddressPath: this.options.adminAddressPath,
          }) &&
          child.send<ToAdmin>({ type: 'state', state: this.state }) &&
          child.send<ToAdmin>({ type: 'unready', workers: this.workers.filter((_, i) => !this.readyWorkers.has(i)).map((w) => w.name) }) &&
          child.send<ToAdmin>({ type: 'hot_restart', status: this.hotRestart }) &&
          this.logLevelChanges.every((change) => child.send<ToAdmin>({ type: 'log_levels', change })) &&
          (!seed || child.send<ToAdmin>({ type: 'stats', id: -1, sources: seed }));
        if (sent) seed = undefined;
        return sent;
      },
      onMessage: (m) => this.onAdminMessage(m),
    });
  }

  private reportUnready(): void {
    const workers = this.workers.map((w, i) => (this.readyWorkers.has(i) ? undefined : w.name)).filter((n): n is string => n !== undefined);
    this.admin?.send<ToAdmin>({ type: 'unready', workers });
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.admin?.send<ToAdmin>({ type: 'state', state });
  }

  private onWorkerMessage(m: FromWorker): void {
    if (m.type === 'ready') {
      this.readyWorkers.add(m.index);
      this.reportUnready();
      if (this.state === 'INITIALIZING' && this.readyWorkers.size === this.options.concurrency) {
        this.startAdmin();
        this.maybeLive();
      }
    } else if (m.type === 'ack') {
      const pending = this.pendingAcks.get(m.ack);
      if (pending && m.result) pending.results.push(m.result);
      pending?.waiting.delete(m.index);
      if (pending && pending.waiting.size === 0) pending.done();
    } else if (m.type === 'stats') {
      this.statsRelay.onWorkerStats(m);
    } else if (m.type === 'outcomes') {
      this.membership.outcomes(m.cluster, m.hosts);
    } else if (m.type === 'cluster_traffic') {
      this.membership.trafficSeen(m.cluster);
    } else if (m.type === 'tap_trace') {
      this.admin?.send<ToAdmin>(m);
    } else if (m.type === 'fatal' && this.state !== 'LIVE') {
      log.critical(`worker_${m.index} could not start: ${m.error}`);
      this.stop(1);
    }
  }

  private onAdminMessage(m: FromAdmin): void {
    switch (m.type) {
      case 'ready':
        this.adminReady = true;
        this.maybeLive();
        break;
      case 'fatal':
        if (!this.adminReady) {
          log.critical(`the admin process could not start: ${m.error}`);
          this.stop(1);
        }
        break;
      case 'quit':
        log.info('shutting down on POST /quitquitquit');
        this.stop(0);
        break;
      case 'counters':
        this.handedBack?.(m.counters);
        break;
      case 'stats_collect':
        this.statsRelay.collect(m.id);
        break;
      case 'runtime_modify': {
        let error: { status: number; message: string } | undefined;
        try {
          this.runtime.modify(m.overrides);
        } catch (err) {
          if (!(err instanceof RuntimeModifyError)) throw err;
          error = { status: err.status, message: err.message };
        }
        this.admin?.send<ToAdmin>({ type: 'runtime_modify_result', id: m.id, ...(error ? { error } : {}) });
        break;
      }
      case 'log_levels':
        applyLogLevelChange(m.change);
        this.logLevelChanges.push(m.change);
        void this.toWorkers((ack) => ({ type: 'log_levels', change: m.change, ack })).then(() => this.admin?.send<ToAdmin>({ type: 'done', id: m.id }));
        break;
      case 'reopen_logs':
        void this.reopenLogs().then(() => m.id !== undefined && this.admin?.send<ToAdmin>({ type: 'done', id: m.id }));
        break;
      case 'drain_listeners':
        void this.drainListeners(m.inboundOnly ? 'inbound' : 'all', m.graceful, m.skipExit).then(() => this.admin?.send<ToAdmin>({ type: 'done', id: m.id }));
        break;
      case 'stats_lookups':
        this.context.statsLookupTracking = m.tracking;
        stats.trackLookups(m.tracking);
        for (const w of this.workers) w.send<ToWorker>({ type: 'stats_lookups', tracking: m.tracking });
        break;
      case 'healthcheck':
        this.context.healthCheckFailing = m.failing;
        this.admin?.send<ToAdmin>({ type: 'healthcheck', failing: m.failing });
        void this.toWorkers((ack) => ({ type: 'healthcheck', failing: m.failing, ack })).then(() => this.admin?.send<ToAdmin>({ type: 'done', id: m.id }));
        break;
      case 'profiler':
        void this.profiling.profiler(m.kind, m.enable).then((outcomes) => this.admin?.send<ToAdmin>({ type: 'profiler_result', id: m.id, outcomes }));
        break;
      case 'tap_start':
        this.context.taps = [...this.context.taps.filter((t) => t.configId !== m.session.configId), m.session];
        void this.toWorkers((ack) => ({ type: 'tap_start', session: m.session, ack })).then(() => this.admin?.send<ToAdmin>({ type: 'done', id: m.id }));
        break;
      case 'tap_stop':
        this.context.taps = this.context.taps.filter((t) => t.id !== m.sessionId);
        for (const w of this.workers) w.send<ToWorker>({ type: 'tap_stop', sessionId: m.sessionId });
        break;
      case 'heap_dump':
        void this.profiling.heapDump(m.process).then((outcome) => this.admin?.send<ToAdmin>({ type: 'profiler_result', id: m.id, outcomes: [outcome] }));
        break;
    }
  }

  /**
   * /drain_listeners. Graceful: every worker starts closing connections per --drain-strategy
   * over --drain-time-s, and the listeners stop at the end (unless skip_exit). Otherwise the
   * listeners stop now. A drain already covering the direction makes a second call a no-op.
   */
  private async drainListeners(direction: DrainOrder['direction'], graceful: boolean, skipExit: boolean): Promise<void> {
    if (graceful) {
      if (this.context.drains.some((d) => d.direction === 'all' || d.direction === direction)) return;
      const order: DrainOrder = { direction, strategy: this.options.drainStrategy, drainTimeMs: this.options.drainTimeS * 1000, startedAt: Date.now() };
      this.context.drains.push(order);
      log.info(`draining ${direction === 'all' ? 'all' : 'inbound'} listeners over ${this.options.drainTimeS} s (${order.strategy})`);
      this.setState('DRAINING');
      if (!skipExit) setTimeout(() => void this.stopListeners(direction), order.drainTimeMs).unref();
      await this.toWorkers((ack) => ({ type: 'drain', order, ack }));
      return;
    }
    await this.stopListeners(direction);
  }

  private async stopListeners(direction: DrainOrder['direction']): Promise<void> {
    const names = this.sockets.listeners.filter((l) => !l.stopped && (direction === 'all' || l.trafficDirection === 'INBOUND')).map((l) => l.name);
    if (names.length === 0) return;
    await this.toWorkers((ack) => ({ type: 'stop_listeners', names, ack }));
    this.sockets.stop(names);
    this.context.listeners = this.sockets.childView();
    this.listenersStopped.inc(names.length);
    log.info(`stopped listener(s) ${names.join(', ')}`);
    this.setState('DRAINING');
  }

  /**
   * Sends every worker (or only worker `only`) a message carrying a fresh ack id; resolves once
   * each has applied it, with the outcomes acks carry. A worker that does not answer in time
   * (2 s; a minute for a heap dump) is not waited for: it is dying or being replaced, and its
   * replacement starts from the context, which already holds the change.
   */
  private toWorkers(make: (ack: number) => ToWorker, only?: number): Promise<ProfilerOutcome[]> {
    const ack = this.nextAck++;
    return new Promise((resolve) => {
      const waiting = new Set<number>();
      const results: ProfilerOutcome[] = [];
      const done = () => {
        clearTimeout(timer);
        this.pendingAcks.delete(ack);
        resolve(results);
      };
      const message = make(ack);
      const timer = setTimeout(done, message.type === 'heap_dump' ? 60_000 : 2000);
      this.pendingAcks.set(ack, { waiting, results, done });
      this.workers.forEach((w, i) => {
        if ((only === undefined || only === i) && w.send<ToWorker>(message)) waiting.add(i);
      });
      if (waiting.size === 0) done();
    });
  }

  private deliverStats(m: ToAdmin): void {
    if (this.admin) {
      this.admin.send<ToAdmin>(m);
      return;
    }
    const local = this.localStats;
    if (!local || m.type !== 'stats') return;
    for (const [source, delta] of m.sources) local.merged.apply(source, delta);
    local.waiting.get(m.id)?.();
  }

  private handedBack: ((counters: [string, number][]) => void) | undefined;

  /**
   * Hot restart, parent side: the next epoch takes the admin interface; this tree keeps its
   * figures itself from now on, starting from the counter totals the admin process hands back
   * (the child's first stats request gets them, so counters continue across the restart).
   * Deltas already on their way to the admin process reach it before the hand-back request
   * (IPC keeps order); later ones come here.
   */
  async shutdownAdminForChild(): Promise<void> {
    if (this.localStats) return;
    const local = (this.localStats = { merged: new MergedStats(), exported: new Map(), waiting: new Map(), nextId: -1_000_000 });
    const admin = this.admin;
    this.admin = undefined;
    log.info('shutting down admin due to child startup');
    if (!admin) return;
    const counters = await new Promise<[string, number][]>((resolve) => {
      const timer = setTimeout(() => {
        log.warn('the admin process did not hand its counters back in time: the next epoch starts them from zero');
        resolve([]);
      }, 1000);
      this.handedBack = (c) => {
        clearTimeout(timer);
        resolve(c);
      };
      if (!admin.send<ToAdmin>({ type: 'hand_back_counters' })) this.handedBack([]);
    });
    this.handedBack = undefined;
    local.merged.apply('handed_back', { lookups: 0, recentLookups: [], counters, gauges: [], histograms: [], textReadouts: [] });
    await admin.stop(1000);
  }

  /**
   * Hot restart, parent side: the child exited before taking over. The admin interface starts
   * again here, from the figures kept since (a later child can take it over as the first did).
   */
  restoreAdmin(): void {
    const local = this.localStats;
    if (!local || this.admin || this.stopping || !this.hasAdmin) return;
    this.localStats = undefined;
    for (const done of local.waiting.values()) done();
    this.admin = this.adminProcess(local.merged.toDeltas('restored'));
    this.admin.start();
  }

  /** Hot restart, parent side: the figures for the child's `stats` request. */
  async exportStats(): Promise<{ counters: Record<string, number>; gauges: Record<string, number>; connections: number; memory: number }> {
    const local = this.localStats;
    if (!local) throw new Error('the admin interface still runs here; stats are exported only after shutdown_admin');
    const id = local.nextId--;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1500);
      local.waiting.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
      this.statsRelay.collect(id, true);
    });
    local.waiting.delete(id);
    const counters: Record<string, number> = {};
    for (const [name, c] of local.merged.counters) {
      const delta = c.value - (local.exported.get(name) ?? 0);
      if (delta > 0) counters[name] = delta;
      local.exported.set(name, c.value);
    }
    const gauges: Record<string, number> = {};
    for (const [name, g] of local.merged.gauges) if (g.used && !g.local) gauges[name] = Math.max(0, local.merged.gaugeValue(name));
    const connections = [...local.merged.gauges.keys()].filter((n) => /^listener\.[^.]+\.downstream_cx_active$/.test(n)).reduce((sum, n) => sum + local.merged.gaugeValue(n), 0);
    return { counters, gauges, connections, memory: local.merged.gaugeValue('server.memory_allocated') };
  }

  /**
   * Hot restart, parent side, on the child's `drain_listeners`: stop accepting now (the child has
   * the sockets) and drain the connections left per --drain-strategy over --drain-time-s; the
   * tree stays until the child says terminate.
   */
  async drainForChild(): Promise<void> {
    log.info('closing and draining listeners');
    await this.stopListeners('all');
    if (this.context.drains.some((d) => d.direction === 'all')) return;
    const order: DrainOrder = { direction: 'all', strategy: this.options.drainStrategy, drainTimeMs: this.options.drainTimeS * 1000, startedAt: Date.now() };
    this.context.drains.push(order);
    this.setState('DRAINING');
    await this.toWorkers((ack) => ({ type: 'drain', order, ack }));
  }

  get hotRestartGeneration(): number {
    return this.serverStats.hotRestartGeneration;
  }

  get originalStartTimeMs(): number {
    return this.context.originalStartTimeMs;
  }

  private startAdmin(): void {
    if (!this.hasAdmin || this.admin || this.adminReady || this.stopping || this.localStats) return;
    this.admin = this.adminProcess();
    this.admin.start();
  }

  private get hasAdmin(): boolean {
    return Boolean((this.context.bootstrap.admin as { address?: unknown } | undefined)?.address);
  }

  /**
   * LIVE once every worker serves and the admin interface answers: a hot-restart child tells its
   * parent to drain only then, so an admin process that cannot start fails the child while the
   * parent still serves.
   */
  private maybeLive(): void {
    if (this.state !== 'INITIALIZING' || this.readyWorkers.size !== this.options.concurrency || (this.hasAdmin && !this.adminReady)) return;
    this.setState('LIVE');
    this.serverStats.becameLive();
    this.resolveLive();
    log.info(`all ${this.workers.length} worker(s) serving ${this.context.listeners.length} listener(s)${this.hasAdmin ? ', admin interface ready' : ''}: LIVE`);
  }

  private resolveLive!: () => void;
  /** Resolves when every worker serves (LIVE), or never if the tree stops first. */
  readonly live = new Promise<void>((resolve) => (this.resolveLive = resolve));

  private hotRestart: HotRestartStatus = { enabled: false };

  /** The hot-restart status for /hot_restart_status (kept for a replacement admin process). */
  reportHotRestart(status: HotRestartStatus): void {
    this.hotRestart = status;
    this.admin?.send<ToAdmin>({ type: 'hot_restart', status });
  }

  /** Hot restart, child side: what the parent epoch said. */
  inheritFromParent(originalStartTimeMs: number, parentGeneration: number): void {
    this.context.originalStartTimeMs = originalStartTimeMs;
    this.serverStats.inheritFromParent(originalStartTimeMs, parentGeneration);
  }

  /** Every process gets the new values at once (between its events), and replacements start with them. */
  private broadcastRuntime(): void {
    if (!this.context) return; // during construction
    const snapshot = this.runtime.snapshot();
    this.context.runtime = snapshot;
    for (const w of this.workers) w.send<ToWorker>({ type: 'runtime', snapshot });
    this.admin?.send<ToAdmin>({ type: 'runtime', snapshot });
  }

  /** Every process reopens its log and access-log files; resolves once every worker has. */
  async reopenLogs(): Promise<void> {
    reopenLogs();
    this.admin?.send<ToAdmin>({ type: 'reopen_logs' });
    await this.toWorkers((ack) => ({ type: 'reopen_logs', ack }));
  }

  /** Stops every child (requests in flight get SHUTDOWN_GRACE_MS), then closes the listening sockets. */
  stop(exitCode: number): Promise<void> {
    this.exitCode = Math.max(this.exitCode, exitCode);
    this.stopping ??= (async () => {
      this.setState('DRAINING');
      await Promise.all([...this.workers.map((w) => w.stop(SHUTDOWN_GRACE_MS)), this.admin?.stop(SHUTDOWN_GRACE_MS)]);
      this.sockets.closeAll();
      this.runtime.close();
      this.membership.close();
      closeSync(this.breakerFd);
      this.resolveDone(this.exitCode);
    })();
    return this.stopping;
  }

  /** For tests and operators: the children's pids. */
  pids(): Record<string, number | undefined> {
    return Object.fromEntries([...(this.admin ? [this.admin] : []), ...this.workers].map((c) => [c.name, c.pid]));
  }
}
