import type { RetryPriority } from '../../../../http/retry-plugins.js';

/**
 * envoy.retry_priorities.previous_priorities: every `update_frequency` tries, the priorities
 * tried so far are kept out of the next tries; once every priority is out, it starts over.
 */
export class PreviousPriorities implements RetryPriority {
  private readonly tried = new Set<number>();
  private sinceUpdate = 0;
  private excluded: ReadonlySet<number> | undefined;

  constructor(private readonly every: number) {}

  onHostAttempted(priority: number): void {
    this.tried.add(priority);
    if (++this.sinceUpdate >= this.every) {
      this.sinceUpdate = 0;
      this.excluded = new Set(this.tried);
    }
  }

  excludedPriorities(): ReadonlySet<number> | undefined {
    return this.excluded;
  }

  exhausted(): void {
    this.tried.clear();
    this.excluded = undefined;
  }
}
