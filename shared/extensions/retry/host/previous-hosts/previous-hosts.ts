import type { RetryHost, RetryHostPredicate } from '../../../../http/retry-plugins.js';

/** envoy.retry_host_predicates.previous_hosts: a retry avoids the hosts this request already tried. */
export class PreviousHosts implements RetryHostPredicate {
  private readonly tried: RetryHost[] = [];

  shouldSelectAnotherHost(host: RetryHost): boolean {
    return this.tried.includes(host);
  }

  onHostAttempted(host: RetryHost): void {
    this.tried.push(host);
  }
}
