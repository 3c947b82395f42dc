/**
 * Requests answered by id between processes of the tree: a fresh id per request, one wait per
 * id, and a deadline after which the wait ends with `undefined` (a late answer then finds nobody
 * waiting and is the caller's to handle, e.g. forwarded on its own). Every request/reply pair on
 * the IPC channels goes through one of these, so none invents its own bookkeeping.
 */
export class PendingReplies<R> {
  private next: number;
  private readonly waiting = new Map<number, (reply: R | undefined) => void>();

  /** Ids count from `first` by `step` (a negative range keeps two requesters on one channel apart). */
  constructor(first = 1, private readonly step = 1) {
    this.next = first;
  }

  /**
   * Sends a request built with a fresh id; resolves with its reply, or with undefined after
   * `timeoutMs` or at once when `send` says the message could not be sent.
   */
  ask(send: (id: number) => boolean | void, timeoutMs: number): Promise<R | undefined> {
    const id = this.next;
    this.next += this.step;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(id, undefined), timeoutMs);
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      if (send(id) === false) this.settle(id, undefined);
    });
  }

  /** The reply to request `id`; false when nobody waits for it any more (late, or never asked). */
  answer(id: number, reply: R): boolean {
    return this.settle(id, reply);
  }

  /** Ends every wait now, with undefined. */
  abandonAll(): void {
    for (const id of [...this.waiting.keys()]) this.settle(id, undefined);
  }

  private settle(id: number, reply: R | undefined): boolean {
    const resolve = this.waiting.get(id);
    if (!resolve) return false;
    this.waiting.delete(id);
    resolve(reply);
    return true;
  }
}
