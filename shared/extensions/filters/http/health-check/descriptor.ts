import type { ExtensionDescriptor, HttpFilterDescriptor } from '../../../descriptor.js';
import { healthCheckFactory } from './health-check.js';

/** Answers (or passes on) health checks; fails them while the server fails health checks. */
export const extensions: readonly (ExtensionDescriptor | HttpFilterDescriptor)[] = [
  {
    name: 'envoy.filters.http.health_check',
    category: 'envoy.filters.http',
    typeName: 'envoy.extensions.filters.http.health_check.v3.HealthCheck',
    description: 'answers or passes health checks; fails them while the proxy drains',
    deprecatedNames: ['envoy.health_check'],
    fields: {
      'envoy.extensions.filters.http.health_check.v3.HealthCheck': ['pass_through_mode', 'headers'],
    },
    create: (name, config, ctx) => healthCheckFactory(name, config, ctx),
  },
];
