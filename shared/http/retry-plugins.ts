/**
 * What a route's retry plugins are to a request's retries (Envoy's RetryHostPredicate and
 * RetryPriority): each request that retries gets instances of its own, made by the plugins'
 * descriptors (shared/extensions/retry/), and the worker's retry state asks them.
 */

/** A host as retry predicates see it. */
export interface RetryHost {
  readonly canary: boolean;
}

/** May reject a host just picked for a try, so that another is picked. */
export interface RetryHostPredicate {
  shouldSelectAnotherHost(host: RetryHost): boolean;
  /** A try went to `host`. */
  onHostAttempted(host: RetryHost): void;
}

/** Which priorities the next try keeps out of. */
export interface RetryPriority {
  /** A try went to a host of `priority`. */
  onHostAttempted(priority: number): void;
  /** Undefined: none excluded. */
  excludedPriorities(): ReadonlySet<number> | undefined;
  /** Every priority was excluded: it starts over. */
  exhausted(): void;
}
