import type { AccessLoggerDescriptor, ExtensionDescriptor } from '../../descriptor.js';

/** Access logs to standard output or standard error (Envoy's stream access loggers). */
export const extensions: readonly (ExtensionDescriptor | AccessLoggerDescriptor)[] = [
  {
    name: 'envoy.access_loggers.stdout',
    category: 'envoy.access_loggers',
    typeName: 'envoy.extensions.access_loggers.stream.v3.StdoutAccessLog',
    description: 'access logs to standard output',
    deprecatedNames: [],
    fields: { 'envoy.extensions.access_loggers.stream.v3.StdoutAccessLog': ['log_format'] },
    destination: () => ({ path: '', stdFd: 1 }),
  },
  {
    name: 'envoy.access_loggers.stderr',
    category: 'envoy.access_loggers',
    typeName: 'envoy.extensions.access_loggers.stream.v3.StderrAccessLog',
    description: 'access logs to standard error',
    deprecatedNames: [],
    fields: { 'envoy.extensions.access_loggers.stream.v3.StderrAccessLog': ['log_format'] },
    destination: () => ({ path: '', stdFd: 2 }),
  },
];
