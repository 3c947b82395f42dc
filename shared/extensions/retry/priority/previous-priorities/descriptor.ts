import type { RetryPriorityDescriptor } from '../../../descriptor.js';
import { PreviousPriorities } from './previous-priorities.js';

export const extensions: readonly RetryPriorityDescriptor[] = [
  {
    name: 'envoy.retry_priorities.previous_priorities',
    category: 'envoy.retry_priorities',
    typeName: 'envoy.extensions.retry.priority.previous_priorities.v3.PreviousPrioritiesConfig',
    description: 'a retry moves to the priorities not tried yet',
    deprecatedNames: [],
    create: (config) => {
      const every = Number(config.update_frequency ?? 0);
      return () => new PreviousPriorities(every);
    },
  },
];
