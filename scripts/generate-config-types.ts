// Generates shared/config/envoy-types.ts: TypeScript types for the Envoy messages the proxy reads,
// from the vendored API (third_party/envoy-api, the protos the loader reads), in the shape the
// loader produces — canonical proto3 JSON with the protos' own field names: durations and
// timestamps as strings ("5s"), 64-bit integers as numbers where they are safe and strings
// beyond, bytes as base64, wrappers as their value, Struct as an object, an Any as its message
// with an inline "@type". @grpc/proto-loader's generator emits protobufjs's object shapes
// instead, so this walks protobufjs's reflection itself.
//
// The roots are the resources (bootstrap, clusters, listeners, routes, endpoints) and every
// extension config type the proxy implements (the extension registry, shared/extensions/registry.ts); what they reach is
// generated, an Any's payload excepted (it names its type at run time).
//
// Usage: node --import tsx scripts/generate-config-types.ts [--check]
//   --check: exits 1 when the committed file is not what the protos generate (test/config-types.test.ts).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeOrCheck } from './generated-file.js';
import protobuf from 'protobufjs';
import { EXTENSIONS } from '../shared/extensions/registry.js';
import { envoySchema } from '../shared/config/schema.js';
import { WRAPPER_TYPES } from '../shared/config/wkt.js';

const root = fileURLToPath(new URL('..', import.meta.url));
export const generatedFile = join(root, 'shared/config/envoy-types.ts');

/** The resource types, with the short names the proxy's code uses for them. */
const RESOURCES: Record<string, string> = {
  Bootstrap: 'envoy.config.bootstrap.v3.Bootstrap',
  Cluster: 'envoy.config.cluster.v3.Cluster',
  ClusterLoadAssignment: 'envoy.config.endpoint.v3.ClusterLoadAssignment',
  Listener: 'envoy.config.listener.v3.Listener',
  RouteConfiguration: 'envoy.config.route.v3.RouteConfiguration',
  HttpConnectionManager: 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
};

const HEADER = `// Generated from the vendored Envoy API (third_party/envoy-api) by
// scripts/generate-config-types.ts: do not edit; run \`npm run generate\` after the API changes.
//
// The configuration as the loader produces it (canonical proto3 JSON, the protos' field names):
// durations and timestamps are strings ("5s"), 64-bit integers numbers where safe and strings
// beyond, bytes base64, wrappers their value, an Any its message with an inline "@type". Every
// field may be absent. Enums are their value names.
/* eslint-disable */

/** A google.protobuf.Any: its message, with the type URL inline. */
export interface Any {
  '@type': string;
  [field: string]: unknown;
}
`;

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const NUMBER = new Set(['double', 'float', 'int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

function scalar(kind: string): string {
  if (NUMBER.has(kind)) return 'number';
  if (INT64.has(kind)) return 'number | string';
  if (kind === 'bool') return 'boolean';
  return 'string'; // string, bytes (base64)
}

/** The JSON form of a well-known type, or undefined for an ordinary message. */
function wellKnown(name: string): string | undefined {
  if (!name.startsWith('google.protobuf.')) return undefined;
  const wrapped = WRAPPER_TYPES[name];
  if (wrapped) return scalar(wrapped);
  switch (name) {
    case 'google.protobuf.Duration':
    case 'google.protobuf.Timestamp':
    case 'google.protobuf.FieldMask':
      return 'string';
    case 'google.protobuf.Struct':
      return '{ [key: string]: unknown }';
    case 'google.protobuf.ListValue':
      return 'unknown[]';
    case 'google.protobuf.Value':
      return 'unknown';
    case 'google.protobuf.Empty':
      return 'Record<string, never>';
    case 'google.protobuf.Any':
      return 'Any';
    default:
      return undefined;
  }
}

const fullName = (t: protobuf.ReflectionObject) => t.fullName.replace(/^\./, '');

/** Every message and enum the roots reach (not through an Any), by full name. */
function reachable(schema: protobuf.Root, roots: string[]): Map<string, protobuf.Type | protobuf.Enum> {
  const found = new Map<string, protobuf.Type | protobuf.Enum>();
  const visit = (t: protobuf.Type | protobuf.Enum) => {
    const name = fullName(t);
    if (found.has(name) || wellKnown(name) !== undefined) return;
    found.set(name, t);
    if (t instanceof protobuf.Enum) return;
    for (const field of t.fieldsArray) {
      field.resolve();
      const target = field.resolvedType;
      if (target instanceof protobuf.Type || target instanceof protobuf.Enum) visit(target);
    }
  };
  for (const r of roots) visit(schema.lookupType(r));
  return found;
}

function fieldType(field: protobuf.Field): string {
  const target = field.resolvedType;
  let t: string;
  if (target instanceof protobuf.Type) t = wellKnown(fullName(target)) ?? fullName(target);
  else if (target instanceof protobuf.Enum) t = fullName(target);
  else t = scalar(field.type);
  if (field instanceof protobuf.MapField) return `{ [key: string]: ${t} }`;
  if (field.repeated) return t.includes(' ') || t.includes('{') ? `(${t})[]` : `${t}[]`;
  return t;
}

/** A tree of namespaces (packages, and messages with nested types), their declarations at the leaves. */
interface Node {
  children: Map<string, Node>;
  declarations: string[];
}
const node = (): Node => ({ children: new Map(), declarations: [] });

function declaration(t: protobuf.Type | protobuf.Enum, indent: string): string {
  const name = t.name;
  if (t instanceof protobuf.Enum) {
    const values = Object.keys(t.values).map((v) => `'${v}'`);
    return `${indent}export type ${name} = ${values.join(' | ')};`;
  }
  const lines = [`${indent}export interface ${name} {`];
  for (const field of t.fieldsArray) {
    const deprecated = field.options?.deprecated === true ? `${indent}  /** @deprecated */\n` : '';
    lines.push(`${deprecated}${indent}  ${field.name}?: ${fieldType(field)};`);
  }
  lines.push(`${indent}}`);
  return lines.join('\n');
}

function render(n: Node, indent: string, out: string[]): void {
  for (const d of n.declarations) out.push(d);
  for (const [name, child] of [...n.children].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out.push(`${indent}export namespace ${name} {`);
    render(child, `${indent}  `, out);
    out.push(`${indent}}`);
  }
}

/** The generated module's text. */
export function generate(): string {
  const schema = envoySchema();
  const roots = [...Object.values(RESOURCES), ...EXTENSIONS.flatMap((e) => [e.typeName, ...(e.perRouteTypeName ? [e.perRouteTypeName] : [])])];
  const types = reachable(schema, roots);
  const tree = node();
  for (const name of [...types.keys()].sort()) {
    const t = types.get(name)!;
    const path = name.split('.').slice(0, -1);
    let at = tree;
    for (const part of path) at = at.children.get(part) ?? at.children.set(part, node()).get(part)!;
    at.declarations.push(declaration(t, '  '.repeat(path.length)));
  }
  const out = [HEADER];
  // Top-level packages are declared namespaces (types only: the module is empty at run time).
  for (const [name, child] of [...tree.children].sort(([a], [b]) => (a < b ? -1 : 1))) {
    out.push(`export declare namespace ${name} {`);
    render(child, '  ', out);
    out.push('}');
  }
  out.push('');
  out.push('/** The resources and the connection manager, by the names the proxy uses. */');
  for (const [short, name] of Object.entries(RESOURCES)) out.push(`export type ${short} = ${name};`);
  out.push('');
  return out.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeOrCheck(generatedFile, generate(), 'the vendored API');
