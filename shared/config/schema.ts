import { createRequire } from 'node:module';
import { accessSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import { distDir, packageRoot } from '../paths.js';
import { createHash } from 'node:crypto';

/**
 * Envoy's current v3 API, loaded with protobufjs from the .proto files vendored in
 * third_party/envoy-api (Envoy's data-plane-api and everything it imports, verbatim; its README
 * names each upstream commit, and scripts/refresh-envoy-api.sh replaces it). Loading the files
 * takes a few hundred ms; the build writes the resolved descriptor to dist/ so that start-up
 * (which counts on every hot restart) reads one JSON file instead, and materialises only the
 * units a configuration reaches.
 */
const require = createRequire(import.meta.url);
const apiDir = join(packageRoot, 'third_party', 'envoy-api');
/** Which API the schema is: the vendored README names its upstream commits (a refresh changes it, and the cache with it). */
const apiVersion = createHash('sha256').update(readFileSync(join(apiDir, 'README.md'))).digest('hex').slice(0, 16);
const includeDirs = [
  apiDir,
  // google/protobuf/*.proto, imported everywhere (protobufjs ships them).
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
  'envoy/extensions/http/original_ip_detection/custom_header/v3/custom_header.proto',
  'envoy/extensions/http/original_ip_detection/xff/v3/xff.proto',
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
  'envoy/extensions/filters/listener/proxy_protocol/v3/proxy_protocol.proto',
  'envoy/extensions/transport_sockets/proxy_protocol/v3/upstream_proxy_protocol.proto',
  'envoy/extensions/retry/host/previous_hosts/v3/previous_hosts.proto',
  'envoy/extensions/retry/host/omit_canary_hosts/v3/omit_canary_hosts.proto',
  'envoy/extensions/retry/priority/previous_priorities/v3/previous_priorities_config.proto',
  'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
  'envoy/extensions/load_balancing_policies/round_robin/v3/round_robin.proto',
  'envoy/extensions/load_balancing_policies/least_request/v3/least_request.proto',
  'envoy/extensions/load_balancing_policies/random/v3/random.proto',
  'envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash.proto',
  'envoy/extensions/load_balancing_policies/maglev/v3/maglev.proto',
  'envoy/extensions/load_balancing_policies/cluster_provided/v3/cluster_provided.proto',
  'envoy/extensions/network/dns_resolver/cares/v3/cares_dns_resolver.proto',
  'envoy/extensions/resource_monitors/fixed_heap/v3/fixed_heap.proto',
  'envoy/extensions/resource_monitors/injected_resource/v3/injected_resource.proto',
  'envoy/extensions/resource_monitors/downstream_connections/v3/downstream_connections.proto',
  'envoy/admin/v3/config_dump.proto',
  'envoy/admin/v3/server_info.proto',
  'envoy/admin/v3/clusters.proto',
  'envoy/admin/v3/listeners.proto',
  'envoy/admin/v3/certs.proto',
  'envoy/admin/v3/memory.proto',
  // File-based and gRPC xDS: the discovery messages.
  'envoy/service/discovery/v3/discovery.proto',
];


const cacheFile = join(distDir, 'envoy-schema.json');
const cacheKey = `units:${apiVersion}:rules-whole:${schemaFiles.join(',')}`;

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
  keepWholeRules(root);
  return root;
}

/**
 * protobufjs flattens a field's options into dotted keys, and keeps only the last value of a key
 * given twice and nothing of an empty message: `(validate.rules).string = {in: "a", in: "b"}`
 * becomes `…string.in: "b"`, and `duration = {gt: {}}` (greater than zero) disappears. Its
 * `parsedOptions` have them whole; the `(validate.rules)` keys are made again from them, a
 * repeated value as its list and an empty message as `{}` (see pgv.ts), for the loader and for
 * the cached schema alike.
 */
function keepWholeRules(ns: protobuf.NamespaceBase): void {
  for (const object of ns.nestedArray) {
    if (object instanceof protobuf.Type) {
      for (const field of object.fieldsArray) {
        const parsed = (field as unknown as { parsedOptions?: Record<string, unknown>[] }).parsedOptions;
        if (!parsed?.some((o) => '(validate.rules)' in o)) continue;
        const options: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(field.options ?? {})) if (!k.startsWith('(validate.rules).')) options[k] = v;
        for (const o of parsed) if (o['(validate.rules)'] !== undefined) flattenRules(o['(validate.rules)'], '(validate.rules)', options);
        field.options = options;
      }
    }
    if (object instanceof protobuf.Namespace) keepWholeRules(object);
  }
}

function flattenRules(value: unknown, key: string, out: Record<string, unknown>): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) flattenRules(v, `${key}.${k}`, out);
    return;
  }
  const previous = out[key];
  // The same rule given in two option entries: every value kept.
  out[key] = previous === undefined ? value : [...[previous].flat(), ...[value].flat()];
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

/**
 * The schema as the build writes it (dist/envoy-schema.json). A unit is a message or enum declared
 * in a package (not inside a message), with everything declared inside it; the API has 449.
 * Each is kept as its own JSON text, with the units its fields (and its nested messages' fields)
 * name, so that a process builds protobufjs's objects only for the units a lookup reaches: see
 * materialisingOnLookup.
 */
export interface SchemaCache {
  key: string;
  /** Unit full name (no leading dot) -> [its package, its protobufjs JSON as text, the units it needs]. */
  units: Record<string, [pkg: string, json: string, needs: string[]]>;
  /** v2 message full name -> its v3 successor, from `(udpa.annotations.versioning).previous_message_type`. */
  successors: Record<string, string>;
}

const isPackage = (object: protobuf.ReflectionObject): object is protobuf.Namespace =>
  object instanceof protobuf.Namespace && !(object instanceof protobuf.Type) && !(object instanceof protobuf.Service);

/** The unit a message or enum belongs to: itself, or the message it is declared in, outermost. */
function unitOf(object: protobuf.ReflectionObject): protobuf.ReflectionObject {
  while (object.parent && !isPackage(object.parent)) object = object.parent;
  return object;
}

const bare = (fullName: string) => fullName.replace(/^\./, '');

/**
 * The units and the successor table, from a loaded schema. Services (the API's xDS services,
 * which the proxy calls by their method paths) and extensions of descriptor options (validate's
 * and udpa's annotations: their values are already in each field's and message's options) are
 * not kept: nothing here looks them up.
 */
export function schemaCache(root: protobuf.Root): SchemaCache {
  qualifyFieldTypes(root);
  const units: SchemaCache['units'] = {};
  const needsOf = (object: protobuf.ReflectionObject, needs: Set<string>) => {
    if (object instanceof protobuf.Type) for (const field of object.fieldsArray) if (field.resolvedType) needs.add(bare(unitOf(field.resolvedType).fullName));
    if (object instanceof protobuf.Namespace) for (const nested of object.nestedArray) needsOf(nested, needs);
  };
  const visit = (ns: protobuf.Namespace) => {
    for (const object of ns.nestedArray) {
      if (isPackage(object)) visit(object);
      else if (object instanceof protobuf.Type || object instanceof protobuf.Enum) {
        const needs = new Set<string>();
        needsOf(object, needs);
        needs.delete(bare(object.fullName));
        units[bare(object.fullName)] = [bare(ns.fullName), JSON.stringify(object.toJSON()), [...needs].sort()];
      }
    }
  };
  visit(root);
  return { key: cacheKey, units, successors: Object.fromEntries(successorsOf(root)) };
}

/** Every message's `(udpa.annotations.versioning).previous_message_type`, as v2 name -> v3 name. */
function successorsOf(ns: protobuf.NamespaceBase, out = new Map<string, string>()): Map<string, string> {
  for (const object of ns.nestedArray) {
    if (object instanceof protobuf.Type) {
      const previous = object.options?.['(udpa.annotations.versioning).previous_message_type'];
      if (typeof previous === 'string') out.set(previous, bare(object.fullName));
    }
    if (object instanceof protobuf.Namespace) successorsOf(object, out);
  }
  return out;
}

/** Written by the build; read at start-up. */
export function writeSchemaCache(root: protobuf.Root = loadSchemaFromProtos()): string {
  mkdirSync(distDir, { recursive: true });
  writeFileSync(cacheFile, JSON.stringify(schemaCache(root)));
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

/**
 * A root that holds only what has been looked up: a lookup first builds (with protobufjs's own
 * `addJSON`) the unit the name belongs to and every unit its fields reach, then looks the name up
 * as protobufjs does. Every one of the API's 689 messages, 2,757 fields and 103 enums was built
 * at start-up, for a bootstrap that reaches a third of them, and held for the process's life.
 * Measured on the bench bootstrap: the supervisor's settled RSS 58.6 -> 57.4 MB, and a cold start
 * to its first answered request 470 -> 399 ms (scripts/bench/startup.ts, medians of 8).
 */
export function materialisingOnLookup(cache: SchemaCache): protobuf.Root {
  const root = new protobuf.Root();
  const built = new Set<string>();
  const build = (start: string) => {
    const pending = [start];
    while (pending.length) {
      const name = pending.pop()!;
      if (built.has(name)) continue;
      built.add(name);
      const [pkg, json, needs] = cache.units[name]!;
      const ns = pkg ? root.define(pkg) : root;
      ns.addJSON({ [name.slice(pkg ? pkg.length + 1 : 0)]: JSON.parse(json) });
      pending.push(...needs);
    }
  };
  const lookupType = root.lookupType.bind(root);
  root.lookupType = (path: string | string[]) => {
    // The unit of a name: the name itself, or the message it is nested in (`a.b.Message.Nested`).
    let name = bare(Array.isArray(path) ? path.join('.') : path);
    while (name && !Object.hasOwn(cache.units, name)) name = name.slice(0, Math.max(0, name.lastIndexOf('.')));
    if (name) build(name);
    return lookupType(path);
  };
  return root;
}

let successorTable: Map<string, string> | undefined;

/** The build's schema file, if there is one and it is this source's. */
export function readSchemaCache(): SchemaCache | undefined {
  try {
    const data = JSON.parse(readFileSync(cacheFile, 'utf8')) as SchemaCache;
    if (data.key === cacheKey) return data;
  } catch {
    // no build yet (tests run from sources): fall back to the .proto files
  }
  return undefined;
}

export function envoySchema(): protobuf.Root {
  if (cached) return cached;
  const cache = readSchemaCache();
  if (cache) {
    successorTable = new Map(Object.entries(cache.successors));
    cached = resolvingOnLookup(materialisingOnLookup(cache));
    return cached;
  }
  const root = loadSchemaFromProtos();
  successorTable = successorsOf(root);
  cached = root;
  return cached;
}

/**
 * v2 message full names -> their v3 successors (the `previous_message_type` annotation that every
 * v3 message of Envoy's API carries), for the v2 bootstrap upgrade.
 */
export function v3Successors(): Map<string, string> {
  envoySchema();
  return successorTable!;
}

export function lookupMessage(fullName: string): protobuf.Type {
  return envoySchema().lookupType(fullName);
}
