import { readFileSync } from 'node:fs';
import { load as loadYaml } from 'js-yaml';
import type protobuf from 'protobufjs';
import { loadBootstrap, readSource, BootstrapError } from '../shared/config/bootstrap.js';
import { checkConstraints } from '../shared/config/constraints.js';
import { list, obj } from '../shared/config/access.js';
import { errorText, type ConfigError } from '../shared/config/config-error.js';
import { ProtoJsonReader, type JsonObject } from '../shared/config/proto-json.js';
import { checkResource, ROUTE_TYPE } from '../shared/config/xds-resource.js';
import { connectionManagers } from '../shared/http/listener-routes.js';

/**
 * The two files of a run, read as Envoy's tool reads them: in the format the extension names
 * (`.yaml`/`.yml`, `.pb_text`, `.pb`, else JSON; a JSON file that JSON will not take, a trailing
 * comma say, is read as the YAML it also is), every field known, every constraint kept. The route
 * configuration is then checked as this proxy checks one from RDS: a field it does not implement
 * is refused by name, never ignored.
 */

export class ToolError extends Error {}

export interface Read {
  message: JsonObject;
  /** Deprecated fields used, as `path: using deprecated option 'Type.field'`. */
  deprecated: string[];
}

/** A file of `type`, canonical, or a ToolError naming the file and what is wrong. */
export function readMessageFile(path: string, root: protobuf.Root, type: protobuf.Type): Read {
  const raw = rawDocument(path, root, type);
  const reader = new ProtoJsonReader(root, { unknownFields: 'reject' });
  const message = reader.readMessage(type, raw, '');
  const errors: ConfigError[] = [...reader.errors];
  if (!errors.length && message) checkConstraints(type, message, '', errors);
  if (errors.length || !message) throw new ToolError(invalid(path, type, errors));
  return { message, deprecated: reader.deprecated.map((d) => `${d.path}: using deprecated option '${d.typeName}.${d.field}'`) };
}

/**
 * An error framed as Envoy's loader frames one (`INVALID_ARGUMENT: Protobuf message (type T with
 * unknown field set {…}) has unknown fields`), which scripts written for its tool look for, with
 * this proxy's words for any other problem.
 */
function invalid(path: string, type: protobuf.Type, errors: readonly ConfigError[]): string {
  const name = type.fullName.slice(1);
  const unknown = errors.filter((e) => e.code === 'unknown_field');
  if (unknown.length) return `${path}: INVALID_ARGUMENT: Protobuf message (type ${name} with unknown field set {${unknown.map((e) => e.path).join(', ')}}) has unknown fields`;
  return `${path}: INVALID_ARGUMENT: ${name}: ${errorText(errors, `; `)}`;
}

function rawDocument(path: string, root: protobuf.Root, type: protobuf.Type): JsonObject {
  const isJson = !/\.(ya?ml|pb|pb_text)$/.test(path);
  if (isJson) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      throw new ToolError(`unable to read file: ${path}`);
    }
    try {
      return asObject(JSON.parse(text), path);
    } catch (jsonError) {
      if (jsonError instanceof ToolError) throw jsonError;
      try {
        return asObject(loadYaml(text, { filename: path }), path);
      } catch {
        throw new ToolError(`${path}: unable to parse JSON as proto (${(jsonError as Error).message})`);
      }
    }
  }
  try {
    return readSource(path, root, type).document;
  } catch (err) {
    if (err instanceof BootstrapError) throw new ToolError(err.message);
    throw err;
  }
}

function asObject(doc: unknown, path: string): JsonObject {
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ToolError(`${path}: the file must hold one message (a mapping), not ${Array.isArray(doc) ? 'a list' : typeof doc}`);
  return doc as JsonObject;
}

/**
 * The route configuration to test: the file as a RouteConfiguration, or, when it is a bootstrap
 * (it has `static_resources`), the inline route_config of the named listener's connection manager.
 */
export function readRouteConfig(path: string, root: protobuf.Root, listenerName: string): Read {
  if (looksLikeBootstrap(path)) return bootstrapRoutes(path, listenerName);
  const read = readMessageFile(path, root, root.lookupType(ROUTE_TYPE));
  return { message: checkedRouteConfig(read.message, path), deprecated: read.deprecated };
}

/**
 * The configuration as the proxy would take it from RDS, with its errors. validate_clusters is
 * left out: it names the clusters of a running proxy, and this tool has none.
 */
function checkedRouteConfig(message: JsonObject, path: string): JsonObject {
  const { validate_clusters: _ignored, ...config } = message;
  const checked = checkResource(ROUTE_TYPE, { '@type': `type.googleapis.com/${ROUTE_TYPE}`, ...config }, 'reject', new Set());
  if (checked.errors.length || !checked.message) throw new ToolError(`${path}: ${errorText(checked.errors, `\n${path}: `)}`);
  return checked.message;
}

function looksLikeBootstrap(path: string): boolean {
  if (/\.pb(_text)?$/.test(path)) return false;
  try {
    const text = readFileSync(path, 'utf8');
    return /(^|[\s{",])static_resources["\s]*:/m.test(text);
  } catch {
    return false;
  }
}

function bootstrapRoutes(path: string, listenerName: string): Read {
  if (!listenerName) throw new ToolError(`${path} is a bootstrap: name the listener whose routes to test with --listener-name/-l`);
  let bootstrap: JsonObject;
  let warnings: string[];
  try {
    const loaded = loadBootstrap({ configPath: path, configYaml: '', bootstrapVersion: undefined, allowUnknownStaticFields: false, disableExtensions: [], serviceCluster: '', serviceNode: '', serviceZone: '' });
    bootstrap = loaded.bootstrap;
    warnings = loaded.warnings;
  } catch (err) {
    if (err instanceof BootstrapError) throw new ToolError(err.message);
    throw err;
  }
  const listeners = list(obj(bootstrap.static_resources).listeners);
  const listener = listeners.find((l) => l.name === listenerName);
  if (!listener) throw new ToolError(`${path}: no listener named '${listenerName}' (the bootstrap has ${listeners.map((l) => `'${String(l.name)}'`).join(', ') || 'none'})`);
  const managers = connectionManagers(listener);
  const inline = managers.find((m) => m.hcm.route_config !== undefined);
  if (!inline) {
    const rds = managers.find((m) => m.hcm.rds !== undefined);
    throw new ToolError(
      rds
        ? `${path}: listener '${listenerName}' takes its routes by RDS ('${String(obj(rds.hcm.rds).route_config_name)}'); test that route configuration with -c`
        : `${path}: listener '${listenerName}' has no HTTP connection manager with a route configuration`,
    );
  }
  return { message: obj(inline.hcm.route_config), deprecated: warnings.filter((w) => w.includes('deprecated')) };
}
