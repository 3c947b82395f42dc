import type { DrainOrder, DrainReason, ServerContext } from '../shared/ipc.js';
import { getLogger } from '../shared/log/logger.js';
import type { ListenerManager } from './listener-manager.js';
import type { Options } from './options.js';
import type { ToWorkers } from './worker-broadcast.js';

/**
 * The tree's drains: /drain_listeners (graceful or not, all or inbound) and a hot-restart
 * parent's drain on its child's request. Each drain is an order in the context, so a replacement
 * worker starts draining too; a stopped listener stays in the context, marked stopped.
 */

const log = getLogger('main', import.meta.url);

export class DrainPlan {
  constructor(
    private readonly options: Options,
    private readonly context: ServerContext,
    private readonly listeners: ListenerManager,
    private readonly toWorkers: ToWorkers,
    /** The server is DRAINING from now on, for `reason`. */
    private readonly draining: (reason: DrainReason) => void,
    /** The listeners changed (the admin process shows them). */
    private readonly listenersChanged: () => void,
  ) {}

  private order(direction: DrainOrder['direction']): DrainOrder {
    return { direction, strategy: this.options.drainStrategy, drainTimeMs: this.options.drainTimeS * 1000, startedAt: Date.now() };
  }

  /**
   * /drain_listeners. Graceful: every worker starts closing connections per --drain-strategy
   * over --drain-time-s, and the listeners stop at the end (unless skip_exit). Otherwise the
   * listeners stop now. A drain already covering the direction makes a second call a no-op.
   */
  async drainListeners(direction: DrainOrder['direction'], graceful: boolean, skipExit: boolean): Promise<void> {
    if (!graceful) return this.stopListeners(direction, 'drain_listeners');
    if (this.context.drains.some((d) => d.direction === 'all' || d.direction === direction)) return;
    const order = this.order(direction);
    this.context.drains.push(order);
    log.info(`draining ${direction === 'all' ? 'all' : 'inbound'} listeners over ${this.options.drainTimeS} s (${order.strategy})`);
    this.draining('drain_listeners');
    if (!skipExit) setTimeout(() => void this.stopListeners(direction, 'drain_listeners'), order.drainTimeMs).unref();
    await this.toWorkers((ack) => ({ type: 'drain', order, ack }));
  }

  /**
   * Hot restart, parent side, on the child's `drain_listeners`: stop accepting now (the child has
   * the sockets) and drain the connections left per --drain-strategy over --drain-time-s; the
   * tree stays until the child says terminate.
   */
  async drainForChild(): Promise<void> {
    log.info('closing and draining listeners');
    await this.stopListeners('all', 'hot_restart');
    if (this.context.drains.some((d) => d.direction === 'all')) return;
    const order = this.order('all');
    this.context.drains.push(order);
    this.draining('hot_restart');
    await this.toWorkers((ack) => ({ type: 'drain', order, ack }));
  }

  /** The listeners of `direction` stop accepting in every worker; later LDS additions in that direction are not made. */
  private async stopListeners(direction: DrainOrder['direction'], reason: DrainReason): Promise<void> {
    const names = this.listeners.stop(direction);
    this.context.listeners = this.listeners.listeners;
    if (names.length === 0) return;
    await this.toWorkers((ack) => ({ type: 'stop_listeners', names, ack }));
    this.listenersChanged();
    log.info(`stopped listener(s) ${names.join(', ')}`);
    this.draining(reason);
  }
}
