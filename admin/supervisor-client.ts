import type { FromAdmin, ToAdmin } from '../shared/ipc.js';
import { PendingReplies } from '../shared/replies.js';

/**
 * Requests from the admin process to the supervisor that are answered: the admin endpoint
 * answers its client only once the supervisor says the change is in effect (in every worker,
 * where that applies), so a script that POSTs and then acts sees the change.
 */

type Reply = Extract<ToAdmin, { type: 'done' } | { type: 'runtime_modify_result' } | { type: 'profiler_result' }>;

const TIMEOUT_MS = 5000;

export class SupervisorClient {
  private readonly pending = new PendingReplies<Reply>();

  constructor(private readonly send: (m: FromAdmin) => void) {}

  /** Sends the message built with a fresh id; resolves with the reply, or undefined after a timeout. */
  request<R extends Reply>(build: (id: number) => FromAdmin, timeoutMs = TIMEOUT_MS): Promise<R | undefined> {
    return this.pending.ask((id) => this.send(build(id)), timeoutMs) as Promise<R | undefined>;
  }

  onReply(reply: Reply): void {
    this.pending.answer(reply.id, reply);
  }
}
