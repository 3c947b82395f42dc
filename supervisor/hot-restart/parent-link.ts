import type { BootstrapRead, BootstrapSources } from '../../shared/config/bootstrap.js';
import { getLogger } from '../../shared/log/logger.js';
import type { HotRestartStatus } from '../../shared/ipc.js';
import type { StatsDelta } from '../../shared/stats/store.js';
import type { InheritSocket } from '../listen-sockets.js';
import type { StatsRelay } from '../stats-relay.js';
import { configurationRequest, takeConfiguration } from './configuration.js';
import { HotRestartRpcError, type HotRestartChannel } from './protocol.js';

/**
 * Hot restart, this epoch as the child of epoch N−1 (Envoy's timeline, reference §6): have the
 * parent read the configuration (this proxy's addition, configuration.ts), ask the parent to
 * shut its admin down (learning the first epoch's start time and the generation), take
 * every listener's socket from it by address, and once this tree serves, tell it to drain and
 * terminate it after --parent-shutdown-time-s. Until then its figures join this tree's at every
 * stats collection.
 *
 * Unlike Envoy, no wait blocks the event loop and each has a deadline: a parent that does not
 * answer at start makes this a regular start (with a warning), and a parent that dies mid-drain
 * is treated as drained, never as a reason to crash.
 */

const log = getLogger('main', import.meta.url);
const CONFIGURATION_TIMEOUT_MS = 2000;
const ADMIN_SHUTDOWN_TIMEOUT_MS = 3000;
const SOCKET_TIMEOUT_MS = 2000;
const STATS_TIMEOUT_MS = 800;

export class ParentLink {
  /** The previous epoch answers (until it is told to terminate, or is found gone). */
  private alive: boolean;
  private state: NonNullable<HotRestartStatus['parent']>;
  /** When the parent is (or was) told to terminate, ms since the epoch. */
  private terminateAt: number | undefined;
  private shutdownTimer: NodeJS.Timeout | undefined;
  private readonly gauges = new Set<string>();
  private terminating: Promise<void> | undefined;
  private statsRelay: StatsRelay | undefined;

  constructor(
    private readonly channel: HotRestartChannel,
    restartEpoch: number,
    private readonly parentShutdownTimeS: number,
    /** The parent's state changed (for /hot_restart_status). */
    private readonly changed: () => void,
  ) {
    this.alive = restartEpoch > 0;
    this.state = this.alive ? 'draining' : 'none';
  }

  status(): Pick<HotRestartStatus, 'parent' | 'parentTerminateAtMs'> {
    return { parent: this.state, ...(this.terminateAt !== undefined ? { parentTerminateAtMs: this.terminateAt } : {}) };
  }

  /**
   * Before this epoch loads its configuration: the parent's read of its sources
   * (configuration.ts). Anything else (sources too large, a parent of another build, or one that
   * does not know the request or does not answer) means reading them here.
   */
  async configuration(sources: BootstrapSources): Promise<BootstrapRead | undefined> {
    const request = configurationRequest(sources);
    if (!this.alive || !request) return undefined;
    try {
      const { reply } = await this.channel.request({ configuration: request }, { timeoutMs: CONFIGURATION_TIMEOUT_MS, expectReply: true });
      const read = takeConfiguration(reply);
      log.info(read ? 'configuration: read by the parent epoch (its API schema is loaded)' : 'configuration: the parent epoch left it to this one (another build, or sources too large for it to read); reading it here');
      return read;
    } catch (err) {
      log.info(`configuration: the parent epoch did not read it (${(err as Error).message}); reading it here`);
      return undefined;
    }
  }

  /** Before binding: the parent lets go of the admin interface. */
  async shutdownAdmin(): Promise<{ originalStartTimeMs: number; parentGeneration: number } | undefined> {
    if (!this.alive) return undefined;
    try {
      const { reply } = await this.channel.request({ shutdown_admin: { child_pid: process.pid } }, { timeoutMs: ADMIN_SHUTDOWN_TIMEOUT_MS, expectReply: true });
      const r = reply?.shutdown_admin;
      if (!r) throw new HotRestartRpcError('the parent answered shutdown_admin with something else');
      return { originalStartTimeMs: r.original_start_time_unix_ms || r.original_start_time_unix_seconds * 1000, parentGeneration: r.hot_restart_generation ?? 1 };
    } catch (err) {
      this.alive = false;
      this.state = 'none';
      log.warn(`no parent epoch answered (${(err as Error).message}); starting as a regular epoch with fresh sockets`);
      return undefined;
    }
  }

  /** How the listener registry asks the parent for each socket. */
  readonly inherit: InheritSocket = async (address, listenerName, index) => {
    if (!this.alive) return undefined;
    try {
      const { fd } = await this.channel.request({ pass_listen_socket: { address, worker_index: index, listener_name: listenerName } }, { timeoutMs: SOCKET_TIMEOUT_MS, expectReply: true });
      return fd >= 0 ? fd : undefined;
    } catch (err) {
      log.warn(`the parent epoch did not pass ${address} (${(err as Error).message}); binding it here`);
      return undefined;
    }
  };

  /** The parent's figures join every collection of this tree's stats. */
  collectInto(statsRelay: StatsRelay): void {
    this.statsRelay = statsRelay;
    if (this.alive) statsRelay.extraSource = () => this.stats();
  }

  /** This tree serves: the parent drains, and is terminated after --parent-shutdown-time-s. */
  drainParent(): void {
    if (!this.alive) return;
    void this.channel.request({ drain_listeners: {} }, { timeoutMs: SOCKET_TIMEOUT_MS, expectReply: false }).catch((err: Error) => {
      log.warn(`could not tell the parent epoch to drain: ${err.message}`);
    });
    const ms = this.parentShutdownTimeS * 1000;
    this.terminateAt = Date.now() + ms;
    log.info(`parent epoch draining; it will be terminated in ${this.parentShutdownTimeS} s`);
    this.shutdownTimer = setTimeout(() => void this.terminate(), ms);
    this.shutdownTimer.unref();
    this.changed();
  }

  /**
   * Ends the parent (parent-shutdown time, this epoch stopping, or the next epoch starting). Its
   * figures are fetched once more first, so counters it counted since the last collection are
   * not lost.
   */
  terminate(): Promise<void> {
    if (!this.alive) return Promise.resolve();
    this.terminating ??= (async () => {
      clearTimeout(this.shutdownTimer);
      const last = await this.stats();
      if (!this.alive) return; // it stopped answering: already handled as gone
      this.alive = false;
      this.terminateAt = Date.now();
      this.state = 'terminated';
      this.changed();
      log.info('shutting down parent after drain');
      await this.channel.request({ terminate: {} }, { timeoutMs: 1000, expectReply: false }).catch(() => undefined);
      this.gone(last?.[1]);
    })();
    return this.terminating;
  }

  close(): void {
    clearTimeout(this.shutdownTimer);
  }

  /**
   * The parent is gone: the next collection takes its last figures (if any) and removes its
   * gauges from the totals (its counters stay counted); then it is no longer asked.
   */
  private gone(last: StatsDelta | undefined): void {
    const relay = this.statsRelay;
    if (!relay) return;
    const delta: StatsDelta = { lookups: 0, recentLookups: [], counters: last?.counters ?? [], gauges: [...this.gauges].map((n) => [n, 0, true, 'accumulate']), histograms: [], textReadouts: [] };
    this.gauges.clear();
    relay.extraSource = async () => {
      relay.extraSource = undefined;
      return ['parent', delta];
    };
  }

  /** The parent's figures for one collection, as a source of the merge. */
  private async stats(): Promise<[string, StatsDelta] | undefined> {
    if (!this.alive) return undefined;
    try {
      const { reply } = await this.channel.request({ stats: {} }, { timeoutMs: STATS_TIMEOUT_MS, expectReply: true });
      const s = reply?.stats;
      if (!s) return undefined;
      const gauges = Object.entries(s.gauges).filter(([name]) => name !== 'server.hot_restart_generation');
      for (const [name] of gauges) this.gauges.add(name);
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
      this.alive = false;
      this.state = 'gone';
      this.changed();
      clearTimeout(this.shutdownTimer);
      this.gone(undefined);
      return undefined;
    }
  }
}
