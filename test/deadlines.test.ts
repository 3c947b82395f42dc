// Deadlines linked in one list per duration (worker/deadlines.ts), as the router's route
// timeouts are: each reached no sooner than its time, in order, never once removed, with the
// list's links right whichever one is removed, and one added by a reached one's callback kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { addDeadline, removeDeadline, type Deadlined, type DeadlineList } from '../worker/deadlines.js';

// The lists' timers do not keep a process alive (a worker lives on its channel): this test's does.
let alive: NodeJS.Timeout;
before(() => {
  alive = setInterval(() => {}, 1000);
});
after(() => clearInterval(alive));

class Item implements Deadlined {
  deadlineAt = 0;
  deadlineList: DeadlineList | undefined;
  deadlinePrev: Deadlined | undefined;
  deadlineNext: Deadlined | undefined;
  reachedAt: number | undefined;
  readonly reached: Promise<void>;
  private resolve!: () => void;

  constructor(
    readonly name: string,
    private readonly order: string[],
    private readonly then?: () => void,
  ) {
    this.reached = new Promise((r) => (this.resolve = r));
  }

  deadlineReached(): void {
    this.reachedAt = performance.now();
    this.order.push(this.name);
    this.then?.();
    this.resolve();
  }
}

test('deadlines of one duration are reached in order, none before its time, none once removed', async () => {
  const order: string[] = [];
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => new Item(n, order));
  for (const item of [a, b, c, d]) addDeadline(item!, performance.now(), 60);
  removeDeadline(b!); // from the middle
  removeDeadline(d!); // the last
  removeDeadline(d!); // again: nothing
  await Promise.all([a!.reached, c!.reached]);
  assert.deepEqual(order, ['a', 'c']);
  for (const item of [a!, c!]) assert.ok(item.reachedAt! >= item.deadlineAt, `${item.name} not before its deadline`);
  assert.equal(a!.deadlineList, undefined, 'a reached deadline is no longer listed');
});

test('the first removed: the timer armed for it finds the next and waits for that one', async () => {
  const order: string[] = [];
  const first = new Item('first', order);
  addDeadline(first, performance.now(), 40);
  const second = new Item('second', order);
  // Added later, so due later than the first, whose removal leaves the timer armed for the first's time.
  await new Promise<void>((resolve) => setImmediate(resolve));
  addDeadline(second, performance.now() + 30, 40);
  removeDeadline(first);
  await second.reached;
  assert.deepEqual(order, ['second']);
  assert.ok(second.reachedAt! >= second.deadlineAt);
});

test('durations have lists of their own; one added by a reached one is kept, and reached in its turn', async () => {
  const order: string[] = [];
  const late = new Item('late', order);
  const chained = new Item('chained', order);
  const early = new Item('early', order, () => addDeadline(chained, performance.now(), 30));
  addDeadline(late, performance.now(), 120);
  addDeadline(early, performance.now(), 20);
  await Promise.all([late.reached, chained.reached]);
  assert.deepEqual(order, ['early', 'chained', 'late']);
  assert.ok(chained.reachedAt! >= chained.deadlineAt);
});

test('a deadline set again replaces the one before', async () => {
  const order: string[] = [];
  const item = new Item('again', order);
  const other = new Item('other', order);
  addDeadline(item, performance.now(), 20);
  addDeadline(other, performance.now(), 20);
  addDeadline(item, performance.now(), 50); // later, and on another list
  await Promise.all([item.reached, other.reached]);
  assert.deepEqual(order, ['other', 'again'], 'reached once, at its new time');
  assert.ok(item.reachedAt! >= item.deadlineAt);
});
