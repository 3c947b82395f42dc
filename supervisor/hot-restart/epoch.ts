import { watchProcess } from '../process-watch.js';
import { getLogger } from '../../shared/log/logger.js';
import type { HotRestartStatus } from '../../shared/ipc.js';
import type { StatsDelta } from '../../shared/stats/store.js';
import { hotRestartVersion } from '../../shared/version.js';
import type { InheritSocket, ListenerSocketRegistry } from '../listeners.js';
import type { Options } from '../options.js';
import type { ProcessTree } from '../tree.js';
import { establishIdentity, type HotRestartIdentity } from './identity.js';
import type { ReplyMessage, RequestMessage } from './framing.js';
import { HotRestartRpcError } from './protocol.js';

/**
 * One epoch's part in hot restart, both roles (Envoy's timeline, reference §6):
 *
 * As the child of epoch N−1: ask it to shut its admin down (learning the first epoch's start
 * time and the generation), take every listener's socket from it by address, start the tree,
 * and once every worker serves clear "initializing", tell the parent to drain, and terminate it
 * after --parent-shutdown-time-s. Its figures join ours at every stats collection until then.
 *
 * As the parent of epoch N+1: answer those requests from the tree (and, on shutdown_admin,
 * terminate our own parent: at most two generations run).
 *
 * Unlike Envoy, no wait blocks the event loop and each has a deadline; a parent that does not
 * answer at start makes this a regular start (with a warning), and a parent that dies mid-drain
 * is treated as drained, never as a reason to crash.
 */

const log = getLogger('main', import.meta.url);
const ADMIN_SHUTDOWN_TIMEOUT_MS = 3000;
const SOCKET_TIMEOUT_MS = 2000;
const STATS_TIMEOUT_MS = 800;

type Phase = NonNullable<HotRestartStatus['phase']>;

export class HotRestartEpoch {
  private tree: ProcessTree | undefined;
  private sockets: ListenerSocketRegistry | undefined;
  /** The previous epoch answers (until it is told to terminate, or is found gone). */
  private parentAlive: boolean;
  private parentGauges = new Set<string>();
  private parentShutdownTimer: NodeJS.Timeout | undefined;
  private phaseValue: Phase = 'initializing';
  /** When the parent is (or was) told to terminate, ms since the epoch. */
  private parentTerminateAt: number | undefined;
  private parentState: NonNullable<HotRestartStatus['parent']>;

  private constructor(
    private readonly options: Options,
    readonly identity: HotRestartIdentity,
  ) {
    this.parentAlive = options.restartEpoch > 0;
    this.parentState = this.parentAlive ? 'draining' : 'none';
  }

  private set phase(p: Phase) {
    this.phaseValue = p;
    this.report();
  }

  status(): HotRestartStatus {
    return {
      enabled: true,
      baseId: this.identity.baseId,
      restartEpoch: this.options.restartEpoch,
      socketPath: this.options.socketPath,
      phase: this.phaseValue,
      parent: this.parentState,
      ...(this.parentTerminateAt !== undefined ? { parentTerminateAtMs: this.parentTerminateAt } : {}),
    };
  }

  /** Tells the admin process (the supervisor forwards it, and replays it to a replacement). */
  private report(): void {
    this.tree?.reportHotRestart(this.status());
  }

  /** Binds this epoch's sockets and region (throws HotRestartError with Envoy's messages). */
  static establish(options: Options, startTimeMs: number): HotRestartEpoch {
    let epoch: HotRestartEpoch | undefined;
    const identity = establishIdentity({
      baseId: options.baseId,
      useDynamicBaseId: options.useDynamicBaseId,
      baseIdPath: options.baseIdPath,
      restartEpoch: options.restartEpoch,
      socketPath: options.socketPath,
      socketMode: options.socketMode,
      trustRoot: options.hotRestartTrustRoot,
      startTimeMs,
      onRequest: (rq) => epoch!.answer(rq),
    });
    epoch = new HotRestartEpoch(options, identity);
    log.info(`initializing epoch ${options.restartEpoch} (base id=${identity.baseId}, hot restart version=${hotRestartVersion(false)})`);
    return epoch;
  }

  /** Child side, before binding: the parent lets go of the admin interface. */
  async shutdownParentAdmin(): Promise<{ originalStartTimeMs: number; parentGeneration: number } | undefined> {
    if (!this.parentAlive) return undefined;
    try {
      const { reply } = await this.identity.channel.request({ shutdown_admin: { child_pid: process.pid } }, { timeoutMs: ADMIN_SHUTDOWN_TIMEOUT_MS, expectReply: true });
      const r = reply?.shutdown_admin;
      if (!r) throw new HotRestartRpcError('the parent answered shutdown_admin with something else');
      return { originalStartTimeMs: r.original_start_time_unix_ms || r.original_start_time_unix_seconds * 1000, parentGeneration: r.hot_restart_generation ?? 1 };
    } catch (err) {
      this.parentAlive = false;
      this.parentState = 'none';
      log.warn(`no parent epoch answered (${(err as Error).message}); starting as a regular epoch with fresh sockets`);
      return undefined;
    }
  }

  /** Child side: how the listener registry asks the parent for each socket. */
  readonly inherit: InheritSocket = async (address, listenerName) => {
    if (!this.parentAlive) return undefined;
    try {
      const { fd } = await this.identity.channel.request({ pass_listen_socket: { address, listener_name: listenerName } }, { timeoutMs: SOCKET_TIMEOUT_MS, expectReply: true });
      return fd >= 0 ? fd : undefined;
    } catch (err) {
      log.warn(`the parent epoch did not pass ${address} (${(err as Error).message}); binding it here`);
      return undefined;
    }
  };

  /** Both sides: the tree this epoch runs, serving the next epoch's requests and collecting the parent's figures. */
  attach(tree: ProcessTree, sockets: ListenerSocketRegistry): void {
    this.tree = tree;
    this.sockets = sockets;
    this.report();
    if (this.parentAlive) tree.statsRelay.extraSource = () => this.parentStats();
    void tree.live.then(() => this.becameLive());
  }

  private becameLive(): void {
    this.identity.region.endInitializing();
    this.identity.region.claimNewest();
    this.phase = 'live';
    if (!this.parentAlive) return;
    void this.identity.channel.request({ drain_listeners: {} }, { timeoutMs: SOCKET_TIMEOUT_MS, expectReply: false }).catch((err: Error) => {
      log.warn(`could not tell the parent epoch to drain: ${err.message}`);
    });
    const ms = this.options.parentShutdownTimeS * 1000;
    this.parentTerminateAt = Date.now() + ms;
    log.info(`parent epoch draining; it will be terminated in ${this.options.parentShutdownTimeS} s`);
    this.parentShutdownTimer = setTimeout(() => void this.terminateParent(), ms);
    this.parentShutdownTimer.unref();
    this.report();
  }

  private terminating: Promise<void> | undefined;

  /**
   * Child side, this epoch stopping on a signal: a parent already draining goes too (as in
   * Envoy); one not yet told to drain keeps serving and gets its admin interface back.
   */
  stoppingChild(): Promise<void> {
    return this.phaseValue === 'initializing' ? Promise.resolve() : this.terminateParent();
  }

  /**
   * Child side: ends the parent (parent-shutdown time, or this epoch stopping). Its figures are
   * fetched once more first, so counters it counted since the last collection are not lost.
   */
  terminateParent(): Promise<void> {
    if (!this.parentAlive) return Promise.resolve();
    this.terminating ??= (async () => {
      clearTimeout(this.parentShutdownTimer);
      const last = await this.parentStats();
      if (!this.parentAlive) return; // it stopped answering: already handled as gone
      this.parentAlive = false;
      this.parentTerminateAt = Date.now();
      this.parentState = 'terminated';
      this.report();
      log.info('shutting down parent after drain');
      await this.identity.channel.request({ terminate: {} }, { timeoutMs: 1000, expectReply: false }).catch(() => undefined);
      this.parentGone(last?.[1]);
    })();
    return this.terminating;
  }

  /**
   * The parent is gone: the next collection takes its last figures (if any) and removes its
   * gauges from the totals (its counters stay counted); then it is no longer asked.
   */
  private parentGone(last: StatsDelta | undefined): void {
    const tree = this.tree;
    if (!tree) return;
    const delta: StatsDelta = { lookups: 0, recentLookups: [], counters: last?.counters ?? [], gauges: [...this.parentGauges].map((n) => [n, 0, true, 'accumulate']), histograms: [], textReadouts: [] };
    this.parentGauges.clear();
    tree.statsRelay.extraSource = async () => {
      tree.statsRelay.extraSource = undefined;
      return ['parent', delta];
    };
  }

  /** Child side: the parent's figures for one collection, as a source of the merge. */
  private async parentStats(): Promise<[string, StatsDelta] | undefined> {
    if (!this.parentAlive) return undefined;
    try {
      const { reply } = await this.identity.channel.request({ stats: {} }, { timeoutMs: STATS_TIMEOUT_MS, expectReply: true });
      const s = reply?.stats;
      if (!s) return undefined;
      const gauges = Object.entries(s.gauges).filter(([name]) => name !== 'server.hot_restart_generation');
      for (const [name] of gauges) this.parentGauges.add(name);
      return [
        'parent',
        {
          lookups: 0,
          recentLookups: [],
          counters: Object.entries(s.counter_deltas),
          gauges: [...gauges.map(([n, v]) => [n, v, true, 'accumulate'] as [string, number, boolean, 'accumulate']), ['server.parent_connections', s.num_connections, true, 'accumulate']],
          histograms: [],
          textReadouts: [],
        },
      ];
    } catch (err) {
      // Gone mid-drain (Envoy #7468): as drained, not a reason to crash.
      log.warn(`the parent epoch did not answer a stats request (${(err as Error).message}); treating it as gone`);
      this.parentAlive = false;
      this.parentState = 'gone';
      this.report();
      clearTimeout(this.parentShutdownTimer);
      this.parentGone(undefined);
      return undefined;
    }
  }

  private stopChildWatch: (() => void) | undefined;

  /**
   * Parent side, after shutdown_admin: a child that exits before it asks us to drain (a listener
   * it cannot bind, a worker that cannot start) would leave this epoch serving traffic with no
   * admin interface — no /ready, no stats — until an operator restarts it. Envoy does; here the
   * admin interface comes back, with the figures kept meanwhile.
   */
  private watchChild(pid: number | undefined): void {
    this.stopChildWatch?.();
    this.stopChildWatch = pid
      ? watchProcess(pid, 250, () => {
          log.warn(`the next epoch (pid ${pid}) exited before taking over; starting the admin interface here again`);
          this.tree?.restoreAdmin();
        })
      : undefined;
  }

  /** Parent side: a request from the next epoch. */
  private async answer(rq: RequestMessage): Promise<{ reply?: ReplyMessage; fd?: number }> {
    const tree = this.tree;
    if (rq.test_connection) return {};
    if (rq.pass_listen_socket) {
      const l = this.sockets?.forHandOver(rq.pass_listen_socket.address, rq.pass_listen_socket.listener_name ?? '');
      return l ? { reply: { pass_listen_socket: { fd: l.fd } }, fd: l.fd } : { reply: { pass_listen_socket: { fd: -1 } } };
    }
    if (!tree) return {};
    if (rq.shutdown_admin) {
      this.watchChild(rq.shutdown_admin.child_pid);
      // At most two generations: our own parent goes now, whatever its drain.
      await Promise.all([tree.shutdownAdminForChild(), this.terminateParent()]);
      const start = tree.originalStartTimeMs;
      return { reply: { shutdown_admin: { original_start_time_unix_seconds: Math.floor(start / 1000), original_start_time_unix_ms: start, hot_restart_generation: tree.hotRestartGeneration } } };
    }
    if (rq.stats) {
      const s = await tree.exportStats();
      return { reply: { stats: { memory_allocated: s.memory, num_connections: s.connections, counter_deltas: s.counters, gauges: s.gauges } } };
    }
    if (rq.drain_listeners) {
      this.stopChildWatch?.();
      this.phase = 'draining';
      await tree.drainForChild();
      return {};
    }
    if (rq.terminate) {
      this.stopChildWatch?.();
      this.phase = 'terminating';
      log.info('shutting down due to child request');
      void tree.stop(0);
      return {};
    }
    return {};
  }

  close(): void {
    clearTimeout(this.parentShutdownTimer);
    this.stopChildWatch?.();
    this.identity.channel.close();
    this.identity.region.releaseIfNewest();
  }
}
