import { closeSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadedBootstrap } from '../shared/config/bootstrap.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import type { DrainReason, FromWorker, HotRestartStatus, LogSettingsMessage, ServerContext, ServerState, ToAdmin, ToWorker } from '../shared/ipc.js';
import { getLogger } from '../shared/log/logger.js';
import type { BreakerCounts } from '../shared/upstream/breaker-counts.js';
import { hotRestartVersion, versionString } from '../shared/version.js';
import { AdminChild } from './admin-child.js';
import { AdminRequests } from './admin-requests.js';
import type { AdminSocket } from './admin-socket.js';
import { ManagedChild } from './children.js';
import { takeSpareWorker } from './spares.js';
import { ClusterManager } from './cluster-manager.js';
import { LiveConfig } from './live-config.js';
import { commandLineOptionsJson } from './command-line-json.js';
import { extensionsForNode } from '../shared/extensions/registry.js';
import { DrainPlan } from './drain-plan.js';
import type { ExportedStats } from './hot-restart/retained-figures.js';
import type { ListenSockets } from './listen-sockets.js';
import type { ListenerManager } from './listener-manager.js';
import type { Options } from './options.js';
import { profilePathOf, TreeProfiling } from './profiling.js';
import { RuntimeLayers } from './runtime-layers.js';
import { ServerStats } from './server-stats.js';
import { StatsRelay } from './stats-relay.js';
import type { BucketRegion } from './ratelimit/bucket-region.js';
import { BreakerGauges } from './upstream/breaker-gauges.js';
import { createBreakerRegion } from './upstream/breaker-region.js';
import { createTreeRegion } from './shared-region.js';
import { Heartbeats } from '../shared/heartbeats.js';
import { UpstreamMembership } from './upstream/membership.js';
import { WorkerBroadcast } from './worker-broadcast.js';
import { WorkerDescriptors } from './worker-descriptors.js';
import { MainThreadWatchdog, WorkerWatchdog, watchdogConfigs } from './watchdog.js';

/**
 * One epoch's process tree: the admin process and the workers, forked with the listening
 * sockets, replaced when they crash, and stopped together. The tree is LIVE once every worker
 * serves its listeners and the admin process answers; a failure before that (a worker or the
 * admin process cannot start) stops the tree with status 1.
 */

const log = getLogger('main', import.meta.url);

/**
 * Bootstrap.flags_path: a file named `drain` there starts the server failing health checks, as
 * Envoy's "starting server in drain mode" (POST /healthcheck/ok ends it).
 */
function startsDraining(bootstrap: JsonObject): boolean {
  const dir = bootstrap.flags_path;
  if (typeof dir !== 'string' || dir === '' || !existsSync(join(dir, 'drain'))) return false;
  log.info(`starting server in drain mode (${join(dir, 'drain')} exists)`);
  return true;
}

/** How long requests in flight may take to finish when the tree is asked to stop. */
export const SHUTDOWN_GRACE_MS = 5000;
/** Where the admin process finds its listening socket: the first descriptor after stdio and the IPC channel. */
const ADMIN_LISTEN_FD = 4;
/** At the latest, the admin process starts this long after the workers (see start()). */
const ADMIN_START_DELAY_MS = 1000;

export class ProcessTree {
  private readonly workers: ManagedChild<FromWorker>[] = [];
  /** What each worker inherits at fork, and the sockets sent to it later. */
  private readonly descriptors: WorkerDescriptors;
  /** The admin process over the tree's life (started, replaced, handed over on a hot restart). */
  private readonly admin: AdminChild;
  private readonly context: ServerContext;
  private state: ServerState = 'PRE_INITIALIZING';
  private readonly readyWorkers = new Set<number>();
  private stopping: Promise<void> | undefined;
  private exitCode = 0;
  private resolveDone!: (code: number) => void;
  readonly statsRelay = new StatsRelay(
    () => this.workers,
    (m) => this.admin.deliverStats(m),
    () => {
      this.serverStats.refresh(this.state, this.context.healthCheckFailing);
      this.breakerGauges.refresh();
    },
  );
  private readonly serverStats: ServerStats;
  /** The circuit-breaker counts every worker maps; a dead worker's are zeroed before its replacement. */
  private readonly breakers: BreakerCounts;
  private readonly breakerFd: number;
  private readonly breakerGauges: BreakerGauges;
  private readonly clusterManager: ClusterManager;
  /** dynamic_resources, applied to the whole tree. */
  private readonly liveConfig: LiveConfig;
  /** Every cluster's hosts and their health, for the whole tree. */
  readonly membership: UpstreamMembership;
  private readonly runtime: RuntimeLayers;
  private readonly drains: DrainPlan;
  private readonly broadcast = new WorkerBroadcast(() => this.workers);
  /** Every worker applies the message (see WorkerBroadcast). */
  private readonly toWorkers = this.broadcast.send;
  private readonly profiling: TreeProfiling;
  private readonly requests: AdminRequests;
  /** Resolves with the process exit status once the whole tree has stopped. */
  readonly done = new Promise<number>((resolve) => (this.resolveDone = resolve));
  /** The watchdogs: the workers' event loops (heartbeats), and the supervisor's own. */
  private readonly workerWatchdog: WorkerWatchdog;
  /** The workers' heartbeat counters (shared/heartbeats.ts), given to each worker. */
  private readonly heartbeatFd: number;
  private readonly mainWatchdog: MainThreadWatchdog;

  constructor(
    private readonly options: Options,
    loaded: LoadedBootstrap,
    private readonly listenerManager: ListenerManager,
    private readonly sockets: ListenSockets,
    logSettings: LogSettingsMessage,
    private readonly buckets: BucketRegion,
    /** Bound before the tree starts (see AdminSocket); undefined without an admin address. */
    adminSocket: AdminSocket | undefined,
  ) {
    this.admin = new AdminChild(adminSocket, {
      greeting: () => [
        {
          type: 'init',
          server: this.context,
          serverInfo: { version: versionString(), hotRestartVersion: hotRestartVersion(this.options.disableHotRestart), commandLineOptions: commandLineOptionsJson(this.options), extensions: extensionsForNode(new Set(this.options.disableExtensions)) },
          adminAddressPath: this.options.adminAddressPath,
          listenFd: ADMIN_LISTEN_FD,
        },
        { type: 'state', state: this.state },
        { type: 'unready', workers: this.workers.filter((_, i) => !this.readyWorkers.has(i)).map((w) => w.name) },
        { type: 'hot_restart', status: this.hotRestart },
        ...this.requests.logLevelChanges.map((change): ToAdmin => ({ type: 'log_levels', change })),
      ],
      onReady: () => this.maybeLive(),
      onFatal: (error) => {
        log.critical(`the admin process could not start: ${error}`);
        void this.stop(1);
      },
      onRequest: (m) => this.requests.handle(m),
      collect: (id) => this.statsRelay.collect(id, true),
    });
    const now = Date.now();
    const watchdogs = watchdogConfigs(loaded.bootstrap);
    const heartbeats = createTreeRegion('heartbeats', Heartbeats.bytes(options.concurrency));
    this.heartbeatFd = heartbeats.fd;
    this.workerWatchdog = new WorkerWatchdog(watchdogs.workers, new Heartbeats(heartbeats.buffer, options.concurrency), (i) => this.workers[i]?.process?.kill('SIGKILL'));
    this.mainWatchdog = new MainThreadWatchdog(watchdogs.main);
    const node = (loaded.bootstrap.node ?? {}) as { cluster?: string };
    this.runtime = new RuntimeLayers(loaded.bootstrap, options.serviceCluster || node.cluster || '', () => this.broadcastRuntime());
    this.clusterManager = new ClusterManager(loaded.bootstrap, now);
    this.context = {
      bootstrap: loaded.bootstrap,
      clusters: this.clusterManager.clusters,
      warmingClusters: [],
      routes: {},
      routeFailures: [],
      clusterFailures: [],
      listeners: listenerManager.listeners,
      listenerFailures: [],
      drainingListeners: [],
      warmingListeners: [],
      socketChannelFd: -1,
      localAddressIpVersion: options.localAddressIpVersion,
      restartEpoch: options.restartEpoch,
      concurrency: options.concurrency,
      startTimeMs: now,
      originalStartTimeMs: now,
      logSettings,
      healthCheckFailing: startsDraining(loaded.bootstrap),
      statsLookupTracking: false,
      statsTags: options.statsTags,
      runtime: this.runtime.snapshot(),
      drains: [],
      enableMutexTracing: options.enableMutexTracing,
      profilePath: profilePathOf(loaded.bootstrap),
      profilers: [],
      taps: [],
      upstream: {},
      breakers: { layout: { capacity: 0, workers: 0 } },
      watchdogTickMs: this.workerWatchdog.tickMs,
      tls: loaded.tls,
      secrets: { static: [], active: [], warming: [] },
    };
    const clusters = this.clusterManager.configs;
    const breakers = createBreakerRegion(options.concurrency);
    this.breakers = breakers.counts;
    this.breakerFd = breakers.fd;
    this.context.breakers = { layout: breakers.counts.layout };
    this.descriptors = new WorkerDescriptors(sockets, { breakers: breakers.fd, buckets: this.buckets.fd, heartbeats: this.heartbeatFd });
    for (const c of this.clusterManager.clusters) breakers.counts.assign(c.name, c.breakerSlot);
    this.breakerGauges = new BreakerGauges(clusters, breakers.counts);
    this.membership = new UpstreamMembership(clusters, (cluster, hosts) => {
      this.context.upstream[cluster] = hosts;
      for (const w of this.workers) w.send<ToWorker>({ type: 'hosts', cluster, hosts });
    }, loaded.tls.clusters);
    this.profiling = new TreeProfiling(this.context, this.toWorkers);
    this.drains = new DrainPlan(options, this.context, listenerManager, this.toWorkers, (reason) => this.setState('DRAINING', reason), () => this.liveConfig.reportListeners());
    this.requests = new AdminRequests({
      context: this.context,
      runtime: this.runtime,
      profiling: this.profiling,
      drains: this.drains,
      statsRelay: this.statsRelay,
      toWorkers: this.toWorkers,
      tellWorkers: (m) => this.workers.forEach((w) => w.send<ToWorker>(m)),
      reply: (m) => this.admin.send(m),
      stop: (code) => void this.stop(code),
    });
    this.liveConfig = new LiveConfig(loaded.bootstrap, options, this.clusterManager, listenerManager, {
      context: this.context,
      sendSocket: (socket) => this.descriptors.send(socket),
      membership: this.membership,
      breakers: this.breakers,
      breakerGauges: this.breakerGauges,
      buckets: this.buckets,
      toEveryWorker: (m) => this.workers.forEach((w) => w.send<ToWorker>(m)),
      toAdmin: (m) => this.admin.send(m),
    });
    this.serverStats = new ServerStats(now, options.concurrency, options.restartEpoch, versionString(), loaded.unknownFields.length, loaded.tls);
  }

  start(): void {
    this.state = 'INITIALIZING';
    if (!this.admin.configured) log.info('no admin address configured: not starting the admin process');
    // The admin process starts once every worker serves — on a hot restart the workers' start is
    // the hand-over time, and an admin process starting beside them on the same cores made it
    // longer — or after ADMIN_START_DELAY_MS, so that a slow start (DNS clusters) can be watched.
    else setTimeout(() => this.startAdmin(), ADMIN_START_DELAY_MS).unref();
    // As Envoy initializes its clusters before its workers serve: the dynamic sources' initial
    // fetch first (CDS), then DNS clusters resolve and health checks make their first round.
    void this.liveConfig
      .start()
      .then(() => this.membership.start())
      .then(() => {
        if (!this.stopping) this.startWorkers();
      });
  }

  /** Forks the workers, each with its descriptors (see WorkerDescriptors). */
  private startWorkers(): void {
    this.listenerManager.markWorkersStarted();
    this.clusterManager.warmingEnabled = true;
    for (let i = 0; i < this.options.concurrency; i++) {
      const worker = new ManagedChild<FromWorker>({
        role: 'worker',
        name: `worker_${i}`,
        descriptors: () => this.descriptors.forFork(i),
        spare: () => {
          const spare = takeSpareWorker(`worker_${i}`);
          if (spare) this.descriptors.adopt(i, spare.channel);
          return spare?.process;
        },
        onStart: (child) => {
          child.send<ToWorker>({ type: 'init', index: i, server: { ...this.context, ...this.descriptors.afterFork(i) } });
          for (const change of this.requests.logLevelChanges) child.send<ToWorker>({ type: 'log_levels', change });
        },
        onMessage: (m) => this.onWorkerMessage(m),
        onExit: () => {
          this.workerWatchdog.forget(i);
          this.descriptors.exited(i);
          this.breakers.clearWorker(i, this.listenerManager.connectionCountSlots());
          this.readyWorkers.delete(i);
          if (!this.stopping) this.reportUnready();
        },
      });
      this.workers.push(worker);
      worker.start();
    }
  }

  private reportUnready(): void {
    const workers = this.workers.map((w, i) => (this.readyWorkers.has(i) ? undefined : w.name)).filter((n): n is string => n !== undefined);
    this.admin.send({ type: 'unready', workers });
  }

  private setState(state: ServerState, reason?: DrainReason): void {
    this.state = state;
    this.admin.send({ type: 'state', state, ...(reason ? { reason } : {}) });
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
      this.broadcast.onAck(m);
    } else if (m.type === 'stats') {
      this.statsRelay.onWorkerStats(m);
    } else if (m.type === 'outcomes') {
      this.membership.outcomes(m.cluster, m.hosts);
    } else if (m.type === 'cluster_traffic') {
      this.membership.trafficSeen(m.cluster);
    } else if (m.type === 'immediate_hc_fail') {
      this.membership.immediateHealthCheckFail(m.cluster, m.address);
    } else if (m.type === 'tap_trace') {
      this.admin.send(m);
    } else if (m.type === 'fatal' && this.state !== 'LIVE') {
      log.critical(`worker_${m.index} could not start: ${m.error}`);
      this.stop(1);
    }
  }

  /** Hot restart, parent side: the next epoch takes the admin interface (see AdminChild). */
  shutdownAdminForChild(): Promise<void> {
    return this.admin.shutdownForChild();
  }

  /** Hot restart, parent side: the child exited before taking over; the admin interface starts again here. */
  restoreAdmin(): void {
    if (!this.stopping) this.admin.restore();
  }

  /** Hot restart, parent side: the figures for the child's `stats` request. */
  exportStats(): Promise<ExportedStats> {
    return this.admin.exportStats();
  }

  /** Hot restart, parent side, on the child's `drain_listeners` (see DrainPlan). */
  drainForChild(): Promise<void> {
    return this.drains.drainForChild();
  }

  get hotRestartGeneration(): number {
    return this.serverStats.hotRestartGeneration;
  }

  get originalStartTimeMs(): number {
    return this.context.originalStartTimeMs;
  }

  private startAdmin(): void {
    if (!this.stopping) this.admin.start();
  }

  /**
   * LIVE once every worker serves and the admin interface answers: a hot-restart child tells its
   * parent to drain only then, so an admin process that cannot start fails the child while the
   * parent still serves (an admin address that cannot be bound fails it before its workers start:
   * see AdminSocket).
   */
  private maybeLive(): void {
    if (this.state !== 'INITIALIZING' || this.readyWorkers.size !== this.options.concurrency || (this.admin.configured && !this.admin.ready)) return;
    this.setState('LIVE');
    this.serverStats.becameLive();
    this.resolveLive();
    log.info(`all ${this.workers.length} worker(s) serving ${this.context.listeners.filter((l) => !l.stopped).length} listener(s)${this.admin.configured ? ', admin interface ready' : ''}: LIVE`);
  }

  private resolveLive!: () => void;
  /** Resolves when every worker serves (LIVE), or never if the tree stops first. */
  readonly live = new Promise<void>((resolve) => (this.resolveLive = resolve));

  private hotRestart: HotRestartStatus = { enabled: false };

  /** The hot-restart status for /hot_restart_status (kept for a replacement admin process). */
  reportHotRestart(status: HotRestartStatus): void {
    this.hotRestart = status;
    this.admin.send({ type: 'hot_restart', status });
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
    this.admin.send({ type: 'runtime', snapshot });
  }

  /** SIGUSR1: every process reopens its log and access-log files. */
  reopenLogs(): Promise<void> {
    return this.requests.reopenLogs();
  }

  /** Stops every child (requests in flight get SHUTDOWN_GRACE_MS), then closes the listening sockets. */
  stop(exitCode: number): Promise<void> {
    this.exitCode = Math.max(this.exitCode, exitCode);
    this.stopping ??= (async () => {
      this.setState('DRAINING', 'shutdown');
      this.workerWatchdog.close();
      await Promise.all([...this.workers.map((w) => w.stop(SHUTDOWN_GRACE_MS)), this.admin.stop(SHUTDOWN_GRACE_MS)]);
      this.mainWatchdog.close();
      this.sockets.closeAll();
      this.descriptors.closeAll();
      this.runtime.close();
      this.liveConfig.close();
      this.membership.close();
      closeSync(this.breakerFd);
      closeSync(this.heartbeatFd);
      this.buckets.close();
      this.resolveDone(this.exitCode);
    })();
    return this.stopping;
  }

  /** For tests and operators: the children's pids. */
  pids(): Record<string, number | undefined> {
    return Object.fromEntries([...(this.admin.process ? [this.admin.process] : []), ...this.workers].map((c) => [c.name, c.pid]));
  }
}
