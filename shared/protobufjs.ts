import { createRequire } from 'node:module';

/** protobufjs's module, as `import protobuf from 'protobufjs'` gives it. */
export type Protobufjs = typeof import('protobufjs');

declare const __PROXY_BUNDLE__: boolean | undefined;

let loaded: Protobufjs | undefined;

/**
 * protobufjs, loaded the first time a caller needs it. A worker needs it only to encode or decode
 * protobuf messages (gRPC calls, Zipkin's and OpenTelemetry's protobuf encodings), the admin
 * only for some endpoints, and their bundles leave it out: it is a library bundle of its own
 * (bin/role-launcher.cjs), 1.2-1.4 MB of a process's memory once loaded and kept. Modules those
 * processes run at start use this where they would import the module (the rest import it, and
 * are themselves imported with import() where it is needed). The supervisor reads configuration
 * at every start and keeps it in its bundle (`require` then runs the bundled copy).
 */
export function protobufjs(): Protobufjs {
  return (loaded ??= (typeof __PROXY_BUNDLE__ !== 'undefined' ? require('protobufjs') : createRequire(import.meta.url)('protobufjs')) as Protobufjs);
}
