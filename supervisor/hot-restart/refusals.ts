import { getLogger } from '../../shared/log/logger.js';
import { stats } from '../../shared/stats/process.js';

/**
 * What the hot-restart channel turned away, where an operator sees it: two counters in /stats
 * and a warning line — the first at once, then at most one per interval with what happened
 * meanwhile, so that a flood of garbage cannot flood the log as well.
 *
 * - `server.hot_restart_refused_datagrams`: not from this deployment (a uid that is not trusted,
 *   no credentials, a bad seal, the wrong epoch, a replayed request).
 * - `server.hot_restart_dropped_datagrams`: from this deployment but unusable (broken framing, a
 *   message over the size limit, a reply nobody waits for, more requests than are answered at once).
 */

const log = getLogger('main', import.meta.url);
const LOG_INTERVAL_MS = 10_000;

export type Verdict = 'refused' | 'dropped';

export class ChannelRefusals {
  private readonly counters = {
    refused: stats.counter('server.hot_restart_refused_datagrams'),
    dropped: stats.counter('server.hot_restart_dropped_datagrams'),
  };
  /** Since this channel opened: for tests and for the channel's own figures. */
  readonly totals = { refused: 0, dropped: 0 };
  private lastLogAt = -Infinity;
  private unlogged = 0;
  private lastUnlogged = '';

  constructor(private readonly socketName: string) {}

  note(verdict: Verdict, why: string, sender: { uid: number; pid: number }): void {
    this.counters[verdict].inc();
    this.totals[verdict]++;
    const line = `hot restart: ${verdict} ${why} on ${this.socketName} (sender uid ${sender.uid}, pid ${sender.pid})`;
    const now = Date.now();
    if (now - this.lastLogAt < LOG_INTERVAL_MS) {
      this.unlogged++;
      this.lastUnlogged = line;
      return;
    }
    const meanwhile = this.unlogged ? `; ${this.unlogged} more since the last such line, the latest: ${this.lastUnlogged}` : '';
    log.warn(`${line}${meanwhile}`);
    this.lastLogAt = now;
    this.unlogged = 0;
  }
}
