import type { RetryHost, RetryHostPredicate } from '../../../../http/retry-plugins.js';

/** envoy.retry_host_predicates.omit_canary_hosts: a retry avoids canary hosts (endpoint metadata envoy.lb canary: true). */
export class OmitCanaryHosts implements RetryHostPredicate {
  shouldSelectAnotherHost(host: RetryHost): boolean {
    return host.canary;
  }

  onHostAttempted(): void {}
}
