import type { FromAdmin, ToAdmin } from '../shared/ipc.js';

/**
 * Requests from the admin process to the supervisor that are answered: the admin endpoint
 * answers its client only once the supervisor says the change is in effect (in every worker,
 * where that applies), so a script that POSTs and then acts sees the change.
 */

type Reply = Extract<ToAdmin, { type: 'done' } | { type: 'runtime_modify_result' } | { type: 'profiler_result' }>;

const TIMEOUT_MS = 5000;

export class SupervisorClient {
  private nextId = 1;
  private readonly waiting = new Map<number, (reply: Reply | undefined) => void>();

  constructor(private readonly send: (m: FromAdmin) => void) {}

  /** Sends the message built with a fresh id; resolves with the reply, or undefined after a timeout. */
  request<R extends Reply>(build: (id: number) => FromAdmin, timeoutMs = TIMEOUT_MS): Promise<R | undefined> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(undefined);
      }, timeoutMs);
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply as R | undefined);
      });
      this.send(build(id));
    });
  }

  onReply(reply: Reply): void {
    const resolve = this.waiting.get(reply.id);
    this.waiting.delete(reply.id);
    resolve?.(reply);
  }
}
