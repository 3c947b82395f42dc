import { createRequire } from 'node:module';
import { accessSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import { distDir } from '../paths.js';

/**
 * Envoy's published v3 API, loaded with protobufjs from the .proto files that
 * @grpc/grpc-js-xds ships (deps/envoy-api and its imports). Loading ~500 .proto files takes
 * 100-140 ms; the build writes the resolved descriptor to dist/ so that start-up (which counts
 * on every hot restart) reads one JSON file instead.
 */
const require = createRequire(import.meta.url);
const xdsPackageJson = require.resolve('@grpc/grpc-js-xds/package.json');
const xdsVersion: string = JSON.parse(readFileSync(xdsPackageJson, 'utf8')).version;
const includeDirs = [
  ...['envoy-api', 'googleapis', 'protoc-gen-validate', 'xds'].map((d) => join(dirname(xdsPackageJson), 'deps', d)),
  // google/protobuf/descriptor.proto, imported by the validate and udpa annotations.
  dirname(require.resolve('protobufjs/package.json')),
];

/** Every message type the proxy reads from configuration or prints in admin output starts here. */
export const schemaFiles = [
  'envoy/config/bootstrap/v3/bootstrap.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto',
  'envoy/extensions/filters/udp/udp_proxy/v3/udp_proxy.proto',
  'envoy/config/trace/v3/zipkin.proto',
  'envoy/config/trace/v3/opentelemetry.proto',
  'envoy/extensions/tracers/opentelemetry/resource_detectors/v3/environment_resource_detector.proto',
  'envoy/extensions/tracers/opentelemetry/resource_detectors/v3/static_config_resource_detector.proto',
  'envoy/extensions/filters/udp/udp_proxy/v3/route.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/health_check/v3/health_check.proto',
  'envoy/extensions/filters/http/tap/v3/tap.proto',
  'envoy/extensions/filters/http/cors/v3/cors.proto',
  'envoy/extensions/filters/http/csrf/v3/csrf.proto',
  'envoy/extensions/filters/http/fault/v3/fault.proto',
  'envoy/extensions/filters/http/rbac/v3/rbac.proto',
  'envoy/extensions/filters/http/compressor/v3/compressor.proto',
  'envoy/extensions/compression/gzip/compressor/v3/gzip.proto',
  'envoy/extensions/compression/brotli/compressor/v3/brotli.proto',
  'envoy/extensions/filters/http/local_ratelimit/v3/local_rate_limit.proto',
  'envoy/extensions/filters/http/buffer/v3/buffer.proto',
  'envoy/extensions/filters/http/lua/v3/lua.proto',
  'envoy/extensions/filters/http/header_to_metadata/v3/header_to_metadata.proto',
  'envoy/extensions/filters/http/grpc_web/v3/grpc_web.proto',
  'envoy/extensions/filters/http/decompressor/v3/decompressor.proto',
  'envoy/extensions/compression/gzip/decompressor/v3/gzip.proto',
  'envoy/extensions/compression/brotli/decompressor/v3/brotli.proto',
  'envoy/extensions/filters/http/ext_authz/v3/ext_authz.proto',
  'envoy/service/auth/v3/external_auth.proto',
  'envoy/extensions/filters/http/ratelimit/v3/rate_limit.proto',
  'envoy/service/ratelimit/v3/rls.proto',
  'envoy/admin/v3/tap.proto',
  'envoy/extensions/access_loggers/file/v3/file.proto',
  'envoy/extensions/access_loggers/stream/v3/stream.proto',
  'envoy/extensions/transport_sockets/tls/v3/tls.proto',
  'envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer.proto',
  'envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto',
  'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
  'envoy/admin/v3/config_dump.proto',
  'envoy/admin/v3/server_info.proto',
  'envoy/admin/v3/clusters.proto',
  'envoy/admin/v3/listeners.proto',
  'envoy/admin/v3/certs.proto',
  'envoy/admin/v3/memory.proto',
  // File-based and gRPC xDS: the discovery messages.
  'envoy/service/discovery/v3/discovery.proto',
];

/**
 * Fields Envoy added after the API release @grpc/grpc-js-xds bundles, that this proxy reads:
 * [message, field, number, type, rule]. Numbers are Envoy's, so binary bootstraps decode too.
 * `Admin.allow_paths` (Envoy 1.37) takes the message's next free number, 7.
 */
const ADDED_FIELDS: [message: string, field: string, id: number, type: string, rule?: string][] = [
  ['envoy.config.bootstrap.v3.Admin', 'allow_paths', 7, '.envoy.type.matcher.v3.StringMatcher', 'repeated'],
];

const cacheFile = join(distDir, 'envoy-schema.json');
const cacheKey = `qualified:${xdsVersion}:${schemaFiles.join(',')}:${ADDED_FIELDS.map((f) => f.join('/')).join(',')}`;

export function loadSchemaFromProtos(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (origin: string, target: string) => {
    for (const dir of includeDirs) {
      const candidate = join(dir, target);
      try {
        accessSync(candidate);
        return candidate;
      } catch {
        // not under this include directory
      }
    }
    return protobuf.util.path.resolve(origin, target);
  };
  root.loadSync(schemaFiles, { keepCase: true });
  root.resolveAll();
  for (const [message, name, id, type, rule] of ADDED_FIELDS) {
    const field = new protobuf.Field(name, id, type, rule);
    root.lookupType(message).add(field);
    field.resolve();
  }
  return root;
}

/**
 * Every message and enum field names its type by its full name: protobufjs finds a relative name
 * (`core.v3.Address`) by searching outwards from the field's message, which was most of the time
 * spent resolving a type at start-up; a full name is one map lookup.
 */
function qualifyFieldTypes(ns: protobuf.NamespaceBase): void {
  for (const object of ns.nestedArray) {
    if (object instanceof protobuf.Type) {
      for (const field of object.fieldsArray) if (field.resolvedType) field.type = field.resolvedType.fullName;
    }
    if (object instanceof protobuf.Namespace) qualifyFieldTypes(object);
  }
}

/** Written by the build; read at start-up. */
export function writeSchemaCache(root: protobuf.Root = loadSchemaFromProtos()): string {
  qualifyFieldTypes(root);
  mkdirSync(distDir, { recursive: true });
  writeFileSync(cacheFile, JSON.stringify({ key: cacheKey, root: root.toJSON() }));
  return cacheFile;
}

let cached: protobuf.Root | undefined;

/**
 * protobufjs generates each message type's constructor with `new Function` when the type is
 * resolved (a third of resolving one); this one does the same (repeated and map fields get
 * their own array and object, then the properties given are copied) without compiling code.
 */
(protobuf.Type as unknown as { generateConstructor: (type: protobuf.Type) => () => unknown }).generateConstructor = (type) => {
  const maps = type.fieldsArray.filter((f) => f.map).map((f) => f.name);
  const arrays = type.fieldsArray.filter((f) => !f.map && f.repeated).map((f) => f.name);
  return () => {
    const ctor = function (this: Record<string, unknown>, properties?: Record<string, unknown>) {
      for (const name of maps) this[name] = {};
      for (const name of arrays) this[name] = [];
      if (properties) for (const key of Object.keys(properties)) if (properties[key] != null && key !== '__proto__') this[key] = properties[key];
    };
    return Object.defineProperty(ctor, 'name', { value: type.name });
  };
};

interface Editioned {
  _edition?: string;
  _resolveFeaturesRecursive(edition: string | undefined): void;
}

/**
 * Resolving all of the API's ~700 message types (field types, and the constructor protobufjs
 * generates for each) took 90 of the schema's 160 ms at start-up, and a bootstrap reaches less
 * than half of them. Here a type is resolved when it is looked up, with every type its fields
 * reach, so that whatever a looked-up type leads to is resolved as `resolveAll` left it. Every
 * way into the schema is `lookupType` (an Any's type is looked up by its URL).
 */
function resolvingOnLookup(root: protobuf.Root): protobuf.Root {
  const resolved = new WeakSet<protobuf.ReflectionObject>();
  const resolveReach = (start: protobuf.ReflectionObject) => {
    const pending = [start];
    while (pending.length) {
      const object = pending.pop()!;
      if (resolved.has(object)) continue;
      resolved.add(object);
      if (object instanceof protobuf.Type) {
        // Editions features are inherited from the .proto file's outermost declaration down: they
        // are resolved from there (protobufjs 7.6 internals; its resolveAll starts at the root).
        let outermost: protobuf.ReflectionObject = object;
        while (outermost.parent && !(outermost as unknown as Editioned)._edition) outermost = outermost.parent;
        (outermost as unknown as Editioned)._resolveFeaturesRecursive((outermost as unknown as Editioned)._edition);
        object.resolveAll();
        for (const field of object.fieldsArray) if (field.resolvedType) pending.push(field.resolvedType);
      }
      // The messages and enums nested in it.
      if (object instanceof protobuf.Namespace) pending.push(...object.nestedArray);
    }
  };
  const lookupType = root.lookupType.bind(root);
  root.lookupType = (path: string | string[]) => {
    const type = lookupType(path);
    resolveReach(type);
    return type;
  };
  return root;
}

export function envoySchema(): protobuf.Root {
  if (cached) return cached;
  try {
    const data = JSON.parse(readFileSync(cacheFile, 'utf8')) as { key: string; root: protobuf.INamespace };
    if (data.key === cacheKey) {
      cached = resolvingOnLookup(new protobuf.Root().addJSON(data.root.nested ?? {}) as protobuf.Root);
      return cached;
    }
  } catch {
    // no build yet (tests run from sources): fall back to the .proto files
  }
  cached = loadSchemaFromProtos();
  return cached;
}

export function lookupMessage(fullName: string): protobuf.Type {
  return envoySchema().lookupType(fullName);
}
