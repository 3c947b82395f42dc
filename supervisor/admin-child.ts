import type { FromAdmin, ToAdmin } from '../shared/ipc.js';
import { getLogger } from '../shared/log/logger.js';
import { PendingReplies } from '../shared/replies.js';
import type { StatsDelta } from '../shared/stats/store.js';
import type { AdminSocket } from './admin-socket.js';
import { ManagedChild } from './children.js';
import { RetainedFigures, type ExportedStats } from './hot-restart/retained-figures.js';

/**
 * The tree's admin process over its life: started (on the socket the supervisor bound for the
 * admin address), replaced when it dies, handed over to the next epoch on a hot restart (its
 * counters handed back, the tree's figures kept here meanwhile: RetainedFigures), and started
 * again from those figures if that epoch exits before taking over.
 */

const log = getLogger('main', import.meta.url);

export interface AdminChildHooks {
  /** What a new admin process is told first (init, state, unready workers, hot restart, log levels), made when it starts. */
  greeting: () => ToAdmin[];
  /** The admin process answers: the tree may be LIVE. */
  onReady: () => void;
  /** The admin process could not start. */
  onFatal: (error: string) => void;
  /** Its requests to the tree (admin endpoints that need the supervisor or the workers). */
  onRequest: (m: Exclude<FromAdmin, { type: 'ready' | 'fatal' | 'counters' }>) => void;
  /** The tree's figures, for RetainedFigures while no admin process runs here. */
  collect: (id: number) => void;
}

export class AdminChild {
  private child: ManagedChild<FromAdmin> | undefined;
  private answered = false;
  /** After a hot-restart child took the admin interface: the tree's figures, kept here. */
  private retained: RetainedFigures | undefined;
  /** The admin process's counter totals, asked for before a hot-restart child takes over. */
  private readonly handBacks = new PendingReplies<[string, number][]>();

  constructor(
    /** Bound before the tree starts (see AdminSocket); undefined without an admin address. */
    private socket: AdminSocket | undefined,
    private readonly hooks: AdminChildHooks,
  ) {}

  /** Whether the bootstrap has an admin address: its socket was bound for it (AdminSocket.bind). */
  get configured(): boolean {
    return this.socket !== undefined;
  }

  /** Whether the admin process has answered (it is ready). */
  get ready(): boolean {
    return this.answered;
  }

  /** The running admin process, if one runs here (for pids()). */
  get process(): ManagedChild<FromAdmin> | undefined {
    return this.child;
  }

  /** Starts the admin process, unless there is none to start, one runs or answered already, or the next epoch has the admin interface. */
  start(): void {
    if (!this.configured || this.child || this.answered || this.retained) return;
    this.child = this.make();
    this.child.start();
  }

  send(m: ToAdmin): void {
    this.child?.send<ToAdmin>(m);
  }

  /** Figures for the admin process, or, while the next epoch has the admin interface, for the figures kept here. */
  deliverStats(m: ToAdmin): void {
    if (this.child) this.child.send<ToAdmin>(m);
    else if (m.type === 'stats') this.retained?.onStats(m);
  }

  /** The admin process; `seed` (the figures so far) is given to its first start only. */
  private make(seed?: [string, StatsDelta][]): ManagedChild<FromAdmin> {
    return new ManagedChild<FromAdmin>({
      role: 'admin',
      name: 'admin',
      descriptors: () => (this.socket ? [this.socket.fd] : []),
      onStart: (child) => {
        const sent = this.hooks.greeting().every((m) => child.send<ToAdmin>(m)) && (!seed || child.send<ToAdmin>({ type: 'stats', id: -1, sources: seed }));
        if (sent) seed = undefined;
        return sent;
      },
      onMessage: (m) => this.onMessage(m),
    });
  }

  private onMessage(m: FromAdmin): void {
    switch (m.type) {
      case 'ready':
        this.answered = true;
        this.hooks.onReady();
        break;
      case 'fatal':
        if (!this.answered) this.hooks.onFatal(m.error);
        break;
      case 'counters':
        this.handBacks.answer(m.id, m.counters);
        break;
      default:
        this.hooks.onRequest(m);
    }
  }

  /**
   * Hot restart, parent side: the next epoch takes the admin interface; this tree keeps its
   * figures itself from now on (see RetainedFigures). Deltas already on their way to the admin
   * process reach it before the hand-back request (IPC keeps order); later ones come here.
   */
  async shutdownForChild(): Promise<void> {
    if (this.retained) return;
    const retained = (this.retained = new RetainedFigures((id) => this.hooks.collect(id)));
    const admin = this.child;
    this.child = undefined;
    log.info('shutting down admin due to child startup');
    // The child binds the address once the admin process has closed its copy too.
    this.socket?.close();
    if (!admin) return;
    const counters = await this.handBacks.ask((id) => admin.send<ToAdmin>({ type: 'hand_back_counters', id }), 1000);
    retained.seed(counters ?? []);
    if (counters) {
      // It answered once its listener was closed: the child may bind the admin address now, and
      // need not wait for the process to exit.
      void admin.stop(1000);
      return;
    }
    log.warn('the admin process did not hand its counters back in time: the next epoch starts them from zero');
    await admin.stop(1000);
  }

  /**
   * Hot restart, parent side: the child exited before taking over. The admin interface starts
   * again here, from the figures kept since (a later child can take it over as the first did).
   */
  restore(): void {
    const retained = this.retained;
    if (!retained || this.child || !this.configured) return;
    try {
      this.socket = this.socket?.rebind();
    } catch (err) {
      log.error(`${(err as Error).message}: this epoch serves on without an admin interface`);
      return;
    }
    this.retained = undefined;
    this.child = this.make(retained.handOverToAdmin('restored'));
    this.child.start();
  }

  /** Hot restart, parent side: the figures for the child's `stats` request. */
  exportStats(): Promise<ExportedStats> {
    if (!this.retained) throw new Error('the admin interface still runs here; stats are exported only after shutdown_admin');
    return this.retained.export();
  }

  stop(graceMs: number): Promise<void> | undefined {
    return this.child?.stop(graceMs);
  }
}
