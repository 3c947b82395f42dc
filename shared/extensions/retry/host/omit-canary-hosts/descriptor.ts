import type { RetryHostPredicateDescriptor } from '../../../descriptor.js';
import { OmitCanaryHosts } from './omit-canary-hosts.js';

/** One instance serves every request: it remembers nothing. */
const predicate = new OmitCanaryHosts();

export const extensions: readonly RetryHostPredicateDescriptor[] = [
  {
    name: 'envoy.retry_host_predicates.omit_canary_hosts',
    category: 'envoy.retry_host_predicates',
    typeName: 'envoy.extensions.retry.host.omit_canary_hosts.v3.OmitCanaryHostsPredicate',
    description: 'a retry avoids canary hosts',
    deprecatedNames: [],
    create: () => () => predicate,
  },
];
