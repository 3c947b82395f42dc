import type { ExtensionDescriptor } from '../../descriptor.js';

const INJECTED = 'envoy.extensions.resource_monitors.injected_resource.v3.InjectedResourceConfig';

/**
 * Envoy's injected resource monitor: the pressure is the number written in `filename`, read at
 * each refresh (worker/overload.ts), so that an operator (or a test) drives the overload actions
 * by hand; a file that cannot be read or parsed counts in `overload.<monitor>.failed_updates`.
 */
export const extensions: readonly ExtensionDescriptor[] = [
  {
    name: 'envoy.resource_monitors.injected_resource',
    category: 'envoy.resource_monitors',
    typeName: INJECTED,
    description: 'the pressure written in a file, for trying the overload manager\'s actions',
    deprecatedNames: [],
    fields: { [INJECTED]: ['filename'] },
  },
];
