import type { AccessLoggerDescriptor, ExtensionDescriptor } from '../../descriptor.js';

/** Access logs to a file (opened by the supervisor before it starts, so that a bad path fails the start). */
export const extensions: readonly (ExtensionDescriptor | AccessLoggerDescriptor)[] = [
  {
    name: 'envoy.access_loggers.file',
    category: 'envoy.access_loggers',
    typeName: 'envoy.extensions.access_loggers.file.v3.FileAccessLog',
    description: 'access logs to a file, in Envoy\'s text or JSON formats',
    deprecatedNames: ['envoy.file_access_log'],
    fields: {
      'envoy.extensions.access_loggers.file.v3.FileAccessLog': ['path', 'format', 'json_format', 'typed_json_format', 'log_format'],
    },
    destination: (config) => ({ path: String(config.path), stdFd: 1 }),
  },
];
