import type { FromWorker, ToWorker } from '../shared/ipc.js';
import type { ProfilerOutcome } from '../shared/profiler.js';
import { PendingReplies } from '../shared/replies.js';
import type { ManagedChild } from './children.js';

/**
 * A change every worker must apply (between its events) before the supervisor answers: each
 * worker gets the message with an ack id of its own and acknowledges it, with an outcome for
 * those that have one. A worker that does not answer in time is not waited for: it is dying or
 * being replaced, and its replacement starts from the context, which already holds the change.
 */

const ACK_TIMEOUT_MS = 2000;

export type ToWorkers = (make: (ack: number) => ToWorker, options?: { only?: number; timeoutMs?: number }) => Promise<ProfilerOutcome[]>;

export class WorkerBroadcast {
  private readonly pending = new PendingReplies<ProfilerOutcome | undefined>();

  constructor(private readonly workers: () => readonly ManagedChild<FromWorker>[]) {}

  /** Resolves once every worker asked (all, or only worker `only`) has applied the message, with the outcomes acks carried. */
  readonly send: ToWorkers = async (make, { only, timeoutMs = ACK_TIMEOUT_MS } = {}) => {
    const asked = this.workers().filter((_, i) => only === undefined || only === i);
    const outcomes = await Promise.all(asked.map((w) => this.pending.ask((ack) => w.send<ToWorker>(make(ack)), timeoutMs)));
    return outcomes.filter((o): o is ProfilerOutcome => o !== undefined);
  };

  onAck(m: Extract<FromWorker, { type: 'ack' }>): void {
    this.pending.answer(m.ack, m.result);
  }
}
