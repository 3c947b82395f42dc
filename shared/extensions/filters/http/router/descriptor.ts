import type { TerminalHttpFilterDescriptor } from '../../../descriptor.js';

/**
 * envoy.filters.http.router: the chain's terminal filter. Its code is the workers' router
 * (worker/http/route-dispatch.ts, forward.ts, router.ts: it needs the upstream pools); what this
 * folder holds is what the loader needs of it.
 */
export const extensions: readonly TerminalHttpFilterDescriptor[] = [
  {
    name: 'envoy.filters.http.router',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.router.v3.Router',
    description: 'forwards requests to the route\'s cluster: retries, timeouts, shadowing',
    deprecatedNames: ['envoy.router'],
    terminal: true,
    fields: {
      'envoy.extensions.filters.http.router.v3.Router': ['start_child_span', 'suppress_envoy_headers'],
    },
  },
];
