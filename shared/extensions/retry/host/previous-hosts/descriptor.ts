import type { RetryHostPredicateDescriptor } from '../../../descriptor.js';
import { PreviousHosts } from './previous-hosts.js';

export const extensions: readonly RetryHostPredicateDescriptor[] = [
  {
    name: 'envoy.retry_host_predicates.previous_hosts',
    category: 'envoy.retry_host_predicates',
    typeName: 'envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate',
    description: 'a retry avoids the hosts tried before',
    deprecatedNames: [],
    create: () => () => new PreviousHosts(),
  },
];
