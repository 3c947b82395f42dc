/**
 * Deadlines of one duration each, such as every request's route timeout or an upstream
 * connection's idle timeout between requests: most are cancelled (the response came first, the
 * connection was taken again), few are reached. A Node timer each cost a Timeout, a closure, a
 * clock read and its list's bookkeeping, per request, to be cleared a moment later.
 *
 * Here the things with deadlines are linked into one list per duration, in place (their own
 * fields are the links: nothing is allocated), in the order they were added, which for one
 * duration is the order of their deadlines. One timer per list waits for the earliest. Removing
 * one is unlinking it; the timer is left as it is, and when it fires it looks at what is first
 * then: reached ones are told, and the timer waits for the next (or, with none left, the list is
 * forgotten). Deadlines are reached no sooner than a timer of their own would have reached them.
 * The timers do not keep the process alive (a worker lives on its channel to the supervisor).
 */

export interface Deadlined {
  /** performance.now() at which the deadline is reached (set by addDeadline). */
  deadlineAt: number;
  deadlineList: DeadlineList | undefined;
  deadlinePrev: Deadlined | undefined;
  deadlineNext: Deadlined | undefined;
  /** The deadline was reached; it is no longer listed. */
  deadlineReached(): void;
}

export class DeadlineList {
  private head: Deadlined | undefined;
  private tail: Deadlined | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly onTimer = () => this.reached();

  constructor(private readonly ms: number) {}

  /** Links `item`, whose deadline is `ms` after `now` (the caller's clock read, at most as old as its latest). */
  add(item: Deadlined, now: number, ms: number): void {
    item.deadlineAt = now + ms;
    item.deadlineList = this;
    item.deadlinePrev = this.tail;
    item.deadlineNext = undefined;
    if (this.tail) this.tail.deadlineNext = item;
    else this.head = item;
    this.tail = item;
    if (!this.timer) this.arm(ms);
  }

  remove(item: Deadlined): void {
    const prev = item.deadlinePrev;
    const next = item.deadlineNext;
    if (prev) prev.deadlineNext = next;
    else this.head = next;
    if (next) next.deadlinePrev = prev;
    else this.tail = prev;
    item.deadlineList = item.deadlinePrev = item.deadlineNext = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.onTimer, Math.max(1, Math.ceil(ms)));
    this.timer.unref();
  }

  private reached(): void {
    this.timer = undefined;
    const now = performance.now();
    let first = this.head;
    while (first && first.deadlineAt <= now) {
      this.remove(first);
      first.deadlineReached();
      first = this.head;
    }
    // (One added meanwhile, by whoever was told, has armed the timer already.)
    if (this.timer) return;
    if (first) this.arm(first.deadlineAt - now);
    // Empty when its timer fired: forgotten, so that durations no longer in use do not pile up.
    else if (lists.get(this.ms) === this) lists.delete(this.ms);
  }
}

const lists = new Map<number, DeadlineList>();

/** Lists `item` to be told `ms` after `now` (a performance.now() the caller just read), unless removed first; a deadline it had is replaced. */
export function addDeadline(item: Deadlined, now: number, ms: number): void {
  // Listed already (a deadline set again): the new one replaces it.
  item.deadlineList?.remove(item);
  let list = lists.get(ms);
  if (!list) lists.set(ms, (list = new DeadlineList(ms)));
  list.add(item, now, ms);
}

/** Takes `item` off its list; nothing if it is not listed (never was, reached, or removed). */
export function removeDeadline(item: Deadlined): void {
  item.deadlineList?.remove(item);
}
