/**
 * Work written as a generator that yields (with no value) where it may pause: the admin's
 * costly steps at scale (sorting stat names, grouping Prometheus families). Run at once, or
 * spread over turns of the event loop so that other requests are answered in between.
 */
export type Pausing<T> = Generator<void, T>;

/** Runs it to the end now. */
export function finish<T>(work: Pausing<T>): T {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
  }
}

/** Runs it to the end, letting the event loop turn at each pause. */
export async function finishYielding<T>(work: Pausing<T>): Promise<T> {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
