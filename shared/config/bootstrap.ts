import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { load as loadYaml } from 'js-yaml';
import type protobuf from 'protobufjs';
import { checkConstraints } from './constraints.js';
import { checkSupportedFields } from './supported.js';
import { checkAnyUses, parseDisabledExtensions } from './extensions.js';
import { mergeMessage } from './merge.js';
import { documentLimitError } from './limits.js';
import { BinaryDecoder } from './proto-binary.js';
import { ProtoJsonReader, type AnyUse, type JsonObject, type UnknownFieldUse } from './proto-json.js';
import { TextFormatError, TextFormatParser } from './proto-text.js';
import { envoySchema } from './schema.js';
import { bootstrapWarnings, checkBootstrapSemantics } from './semantic.js';
import { upgradeV2Bootstrap } from './upgrade-v2.js';
import { readDataSource } from './data-source.js';
import { loadAllTls, type LoadedTls } from '../tls/context.js';

/**
 * Loads a bootstrap the way Envoy does: the file's format from its extension (`.pb` binary,
 * `.pb_text` text, `.yaml`/`.yml` YAML, anything else JSON), `--config-yaml` merged over it with
 * protobuf merge semantics, a v2 document upgraded to v3, then the schema, Envoy's constraint
 * annotations, the extension registry and the whole-bootstrap checks. Every error found is
 * reported, not just the first.
 */

export const BOOTSTRAP_TYPE = 'envoy.config.bootstrap.v3.Bootstrap';

export interface BootstrapSource {
  configPath: string;
  configYaml: string;
  /** 2 or 3; undefined: upgrade v2 constructs where present, otherwise read as v3. */
  bootstrapVersion: number | undefined;
  allowUnknownStaticFields: boolean;
  disableExtensions: string[];
  serviceCluster: string;
  serviceNode: string;
  serviceZone: string;
}

export interface LoadedBootstrap {
  bootstrap: JsonObject;
  /** Unknown fields seen under --allow-unknown-static-fields (each occurrence; `server.static_unknown_fields`). */
  unknownFields: UnknownFieldUse[];
  /** Things an operator should know but that do not stop the load (deprecations, upgrades, unknown fields). */
  warnings: string[];
  /** The TLS contexts, their certificates and keys read now (a hot restart reads them again). */
  tls: LoadedTls;
}

export class BootstrapError extends Error {
  readonly code = 'PROXY_BOOTSTRAP_INVALID';
  constructor(readonly errors: string[]) {
    super(errors.join('\n'));
  }
}

export function bootstrapFormat(path: string): 'binary' | 'text' | 'yaml' | 'json' {
  const ext = extname(path);
  if (ext === '.pb') return 'binary';
  if (ext === '.pb_text') return 'text';
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  return 'json';
}

export interface Parsed {
  /** Raw canonical JSON (from YAML/JSON, or decoded from binary/text). */
  document: JsonObject;
  unknownFields: UnknownFieldUse[];
}

function parseYaml(text: string, what: string): JsonObject {
  let doc: unknown;
  try {
    doc = loadYaml(text, { filename: what });
  } catch (err) {
    throw new BootstrapError([`${what}: unable to parse YAML: ${(err as Error).message}`]);
  }
  if (doc === undefined || doc === null) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new BootstrapError([`${what}: a bootstrap must be a mapping, not ${Array.isArray(doc) ? 'a list' : typeof doc}`]);
  return withinLimits(doc as JsonObject, what);
}

/** The document, if no reader after the parser could be made to explode on it (limits.ts). */
function withinLimits(doc: JsonObject, what: string): JsonObject {
  const refusal = documentLimitError(doc);
  if (refusal) throw new BootstrapError([`${what}: refused: ${refusal}`]);
  return doc;
}

/** A recursive decoder that ran out of stack on a nested input says so, as a configuration error. */
function tooDeep(err: unknown, what: string): never {
  if (err instanceof RangeError) throw new BootstrapError([`${what}: refused: nested too deeply to read`]);
  throw err;
}

/**
 * A file of `type` in any of the formats (by extension), as raw canonical JSON, with the loader's
 * limits; a file that cannot be read or parsed is a BootstrapError naming it. Bootstrap files and
 * file-based xDS responses both come through here.
 */
export function readSource(path: string, root: protobuf.Root, type: protobuf.Type): Parsed {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch {
    throw new BootstrapError([`unable to read file: ${path}`]);
  }
  switch (bootstrapFormat(path)) {
    case 'binary': {
      let decoded: ReturnType<BinaryDecoder['decode']>;
      try {
        decoded = new BinaryDecoder(root).decode(type, data);
      } catch (err) {
        tooDeep(err, path);
      }
      if (decoded.errors.length) throw new BootstrapError(decoded.errors.map((e) => `${path}: ${e}`));
      return { document: withinLimits(decoded.json, path), unknownFields: decoded.unknownFields };
    }
    case 'text': {
      try {
        const parser = new TextFormatParser(root, data.toString('utf8'));
        const document = parser.parse(type);
        if (parser.errors.length) throw new BootstrapError(parser.errors.map((e) => `${path}: ${e}`));
        return { document: withinLimits(document, path), unknownFields: parser.unknownFields };
      } catch (err) {
        if (err instanceof TextFormatError) throw new BootstrapError([`${path}: unable to parse text proto: ${err.message}`]);
        tooDeep(err, path);
      }
    }
    case 'yaml':
      return { document: parseYaml(data.toString('utf8'), path), unknownFields: [] };
    case 'json': {
      let doc: unknown;
      try {
        doc = JSON.parse(data.toString('utf8'));
      } catch (err) {
        throw new BootstrapError([`${path}: unable to parse JSON: ${(err as Error).message}`]);
      }
      if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new BootstrapError([`${path}: a bootstrap must be a JSON object`]);
      return { document: withinLimits(doc as JsonObject, path), unknownFields: [] };
    }
  }
}

/** Reads, upgrades and validates one source; errors are prefixed with where they come from. */
function normalise(parsed: Parsed, label: string, src: BootstrapSource, root: protobuf.Root, type: protobuf.Type, errors: string[], warnings: string[], unknown: UnknownFieldUse[]) {
  let document = parsed.document;
  if (src.bootstrapVersion !== 3) {
    const upgraded = upgradeV2Bootstrap(root, document);
    document = upgraded.document;
    if (upgraded.changes.length) warnings.push(`${label ? `${label}: ` : ''}upgraded v2 configuration to v3: ${upgraded.changes.join('; ')}`);
  }
  const reader = new ProtoJsonReader(root, { unknownFields: src.allowUnknownStaticFields ? 'allow' : 'reject' });
  const result = reader.readMessage(type, document, '');
  const prefix = (e: string) => (label ? `${label}: ${e}` : e);
  for (const use of parsed.unknownFields) {
    if (src.allowUnknownStaticFields) reader.unknownFields.push(use);
    else errors.push(prefix(`${use.path}: unknown field in ${use.typeName}`));
  }
  errors.push(...reader.errors.map(prefix));
  unknown.push(...reader.unknownFields);
  for (const d of reader.deprecated) warnings.push(prefix(`${d.path}: using deprecated option '${d.typeName}.${d.field}'`));
  return { bootstrap: result, anys: reader.anys };
}

export function loadBootstrap(src: BootstrapSource): LoadedBootstrap {
  if (!src.configPath && !src.configYaml) {
    throw new BootstrapError(['At least one of --config-path or --config-yaml should be non-empty']);
  }
  if (src.bootstrapVersion !== undefined && src.bootstrapVersion !== 2 && src.bootstrapVersion !== 3) {
    throw new BootstrapError([`--bootstrap-version ${src.bootstrapVersion} is not supported (2 or 3)`]);
  }
  const root = envoySchema();
  const type = root.lookupType(BOOTSTRAP_TYPE);
  const errors: string[] = [];
  const warnings: string[] = [];
  const unknownFields: UnknownFieldUse[] = [];
  const anys: AnyUse[] = [];

  let bootstrap: JsonObject = {};
  if (src.configPath) {
    if (src.bootstrapVersion === 2 && bootstrapFormat(src.configPath) === 'binary') {
      throw new BootstrapError([`${src.configPath}: binary v2 bootstraps cannot be upgraded by this proxy; convert the file to v3 (or to YAML/JSON)`]);
    }
    const file = normalise(readSource(src.configPath, root, type), '', src, root, type, errors, warnings, unknownFields);
    if (file.bootstrap) bootstrap = file.bootstrap;
    anys.push(...file.anys);
  }
  if (src.configYaml) {
    const overlay = normalise({ document: parseYaml(src.configYaml, '--config-yaml'), unknownFields: [] }, '--config-yaml', src, root, type, errors, warnings, unknownFields);
    if (overlay.bootstrap) bootstrap = mergeMessage(type, bootstrap, overlay.bootstrap);
    anys.push(...overlay.anys);
  }
  // Every stage runs, so that one run reports every problem in the file (a field that cannot be
  // read does not hide an extension that is refused). What an earlier error causes is left out:
  // an error under a field that already failed (or above it), and a route's "unknown cluster"
  // once a cluster itself is in error (its name may be what failed).
  const failed = errors.map((e) => e.replace(/^--config-yaml: /, '').split(': ')[0]!);
  const fieldErrors: string[] = [];
  checkConstraints(type, bootstrap, '', fieldErrors);
  checkSupportedFields(type, bootstrap, '', fieldErrors);
  checkAnyUses(anys, parseDisabledExtensions(src.disableExtensions, (w) => warnings.push(w)), fieldErrors);
  // A field that failed to read leaves its parents half read: nothing above it is checked. A field
  // refused (or out of its bounds) was read whole: only what is under it would repeat it.
  const refused: string[] = [];
  const followsFrom = (e: string) => {
    const path = e.split(': ')[0]!;
    return failed.some((f) => path.startsWith(f) || f.startsWith(path)) || refused.some((f) => path.startsWith(f));
  };
  errors.push(...fieldErrors.filter((e) => !followsFrom(e)));
  refused.push(...fieldErrors.map((e) => e.split(': ')[0]!));
  const clusterInError = [...failed, ...refused].some((f) => f.startsWith('static_resources.clusters['));
  const later: string[] = [];
  checkBootstrapSemantics(bootstrap, later);
  const tls = loadAllTls(bootstrap, readDataSource, later);
  errors.push(...later.filter((e) => !followsFrom(e) && !(clusterInError && /: route: unknown (weighted |mirror )?cluster /.test(e))));
  if (errors.length) throw new BootstrapError(errors);
  warnings.push(...bootstrapWarnings(bootstrap));

  const seen = new Set<string>();
  for (const u of unknownFields) {
    const key = `${u.typeName}.${u.field}`;
    if (seen.has(key)) continue;
    seen.add(key);
    warnings.push(`unknown field '${u.field}' in ${u.typeName} (at ${u.path}) ignored because of --allow-unknown-static-fields`);
  }
  return { bootstrap: applyNodeOverrides(bootstrap, src), unknownFields, warnings, tls };
}

/** `--service-cluster`, `--service-node` and `--service-zone` override the bootstrap's node. */
function applyNodeOverrides(bootstrap: JsonObject, src: BootstrapSource): JsonObject {
  if (!src.serviceCluster && !src.serviceNode && !src.serviceZone) return bootstrap;
  const node = { ...((bootstrap.node as JsonObject | undefined) ?? {}) };
  if (src.serviceNode) node.id = src.serviceNode;
  if (src.serviceCluster) node.cluster = src.serviceCluster;
  if (src.serviceZone) node.locality = { ...((node.locality as JsonObject | undefined) ?? {}), zone: src.serviceZone };
  return { ...bootstrap, node };
}
