import type { BootstrapHandOver } from '../../shared/config/bootstrap.js';
import { getLogger } from '../../shared/log/logger.js';
import type { HotRestartStatus } from '../../shared/ipc.js';
import type { ListenerManager } from '../listener-manager.js';
import { watchProcess } from '../process-watch.js';
import type { ProcessTree } from '../tree.js';
import { answerConfiguration, prepareForNextEpoch } from './configuration.js';
import type { ReplyMessage, RequestMessage } from './framing.js';

/**
 * Hot restart, this epoch as the parent of epoch N+1: answers its requests — a read of its
 * configuration (configuration.ts), and from the tree: listening sockets by address, the
 * admin interface (and, with it, our own parent: at most two generations run), stats, drain,
 * terminate.
 */

const log = getLogger('main', import.meta.url);

type Phase = NonNullable<HotRestartStatus['phase']>;

export class ChildLink {
  private tree: ProcessTree | undefined;
  private sockets: ListenerManager | undefined;
  private stopChildWatch: (() => void) | undefined;
  private configuration: BootstrapHandOver | undefined;

  constructor(
    /** Ends this epoch's own parent, if it still runs. */
    private readonly terminateOwnParent: () => Promise<void>,
    private readonly setPhase: (phase: Phase) => void,
  ) {}

  attach(tree: ProcessTree, sockets: ListenerManager, configuration: BootstrapHandOver): void {
    this.tree = tree;
    this.sockets = sockets;
    this.configuration = configuration;
  }

  /** A request from the next epoch. */
  readonly answer = async (rq: RequestMessage): Promise<{ reply?: ReplyMessage; fd?: number }> => {
    const tree = this.tree;
    if (rq.test_connection) return {};
    if (rq.configuration) return { reply: answerConfiguration(rq.configuration, this.configuration) };
    if (rq.pass_listen_socket) {
      // Socket by socket: the next epoch asks for index 0, 1, … until there is none (one per worker with reuse_port).
      const l = this.sockets?.forHandOver(rq.pass_listen_socket.address, rq.pass_listen_socket.listener_name ?? '');
      const fd = l?.fds[rq.pass_listen_socket.worker_index ?? 0];
      return fd !== undefined ? { reply: { pass_listen_socket: { fd } }, fd } : { reply: { pass_listen_socket: { fd: -1 } } };
    }
    if (!tree) return {};
    if (rq.shutdown_admin) {
      this.watchChild(rq.shutdown_admin.child_pid);
      await Promise.all([tree.shutdownAdminForChild(), this.terminateOwnParent()]);
      const start = tree.originalStartTimeMs;
      return { reply: { shutdown_admin: { original_start_time_unix_seconds: Math.floor(start / 1000), original_start_time_unix_ms: start, hot_restart_generation: tree.hotRestartGeneration } } };
    }
    if (rq.stats) {
      const s = await tree.exportStats();
      return { reply: { stats: { memory_allocated: s.memory, num_connections: s.connections, counter_deltas: s.counters, gauges: s.gauges } } };
    }
    if (rq.drain_listeners) {
      this.stopChildWatch?.();
      this.setPhase('draining');
      await tree.drainForChild();
      return {};
    }
    if (rq.terminate) {
      this.stopChildWatch?.();
      this.setPhase('terminating');
      log.info('shutting down due to child request');
      void tree.stop(0);
    }
    return {};
  };

  /** This epoch serves: the next one may come (configuration.ts). */
  prepare(): void {
    if (this.configuration) prepareForNextEpoch(this.configuration);
  }

  close(): void {
    this.stopChildWatch?.();
  }

  /**
   * After shutdown_admin: a child that exits before it asks us to drain (a listener it cannot
   * bind, a worker that cannot start) would leave this epoch serving traffic with no admin
   * interface — no /ready, no stats — until an operator restarts it. Envoy does; here the admin
   * interface comes back, with the figures kept meanwhile.
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
}
