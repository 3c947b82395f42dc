import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { load as loadYaml } from 'js-yaml';
import type protobuf from 'protobufjs';
import { cryptoModule } from '../builtins.js';
import { checkConstraints } from './constraints.js';
import { checkSupportedFields } from './supported.js';
import { checkAnyUses, parseDisabledExtensions } from '../extensions/registry.js';
import { mergeMessage } from './merge.js';
import { documentLimitError, MAX_VALUES } from './limits.js';
import { BinaryDecoder } from './proto-binary.js';
import { ProtoJsonReader, type AnyUse, type JsonObject, type UnknownFieldUse } from './proto-json.js';
import { TextFormatError, TextFormatParser } from './proto-text.js';
import { envoySchema } from './schema.js';
import { bootstrapWarnings, checkBootstrapSemantics } from './semantic/bootstrap.js';
import { upgradeV2Bootstrap } from './upgrade-v2.js';
import { buildIdentity } from '../version.js';
import { readDataSource } from './data-source.js';
import { loadAllTls, type LoadedTls } from '../extensions/transport-sockets/tls/context.js';
import { staticListenerNames } from './resources.js';
import { ConfigError, configError, errorText } from './config-error.js';

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
  /** Each of static_resources.listeners' names: its own, or the UUID minted for it (staticListenerNames). */
  listenerNames: string[];
  /** The sources and their read, for the next epoch of a hot restart. */
  handOver: BootstrapHandOver;
}

/**
 * The half of a load that needs the API schema: the sources parsed, upgraded, read against the
 * schema, its constraints and the extension registry checked. It depends on nothing but the
 * sources and the build, so another process of the same build can make it: a hot restart's
 * parent, whose schema is loaded, reads its new epoch's sources for it (loading the schema is
 * most of a new process's start; supervisor/hot-restart/configuration.ts). The other half, the
 * whole-bootstrap checks (some look at the file system: paths that must exist) and the TLS
 * material (which an operator may have rotated for this very restart), always runs in the
 * process that will serve.
 */
export interface BootstrapRead {
  /** Before --service-cluster/-node/-zone are applied. */
  bootstrap: JsonObject;
  warnings: string[];
  unknownFields: UnknownFieldUse[];
  /** What the read found wrong; the checks that follow run all the same, so that one run reports everything. */
  errors: ConfigError[];
  /** The paths of fields that failed to read, and of those read but refused (their errors' causes). */
  failed: string[];
  refusedFields: string[];
  /** The sources could not be read at all (a file that is not YAML, say): these errors alone. */
  refused?: ConfigError[];
}

export interface BootstrapHandOver {
  sources: BootstrapSources;
  read: BootstrapRead;
  /** The read was made in another process (so this one has not loaded the schema). */
  readElsewhere: boolean;
}

/** A load's inputs, read once: the file's bytes, and the fingerprint of everything the read depends on. */
export interface BootstrapSources {
  /** The options the read depends on. */
  options: BootstrapSource;
  file: Buffer | undefined;
  /**
   * SHA-256 over this build's identity, every option the read depends on, --config-yaml and the
   * file's bytes: the same key means the same read.
   */
  key: Buffer;
}

/** The bytes a read of `sources` parses: the file's and --config-yaml's. */
export function sourceBytes(sources: BootstrapSources): number {
  return (sources.file?.length ?? 0) + Buffer.byteLength(sources.options.configYaml);
}

export class BootstrapError extends Error {
  readonly code = 'PROXY_BOOTSTRAP_INVALID';
  constructor(readonly errors: ConfigError[]) {
    super(errorText(errors, '\n'));
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

function parseYaml(text: string, what: string, maxValues = MAX_VALUES): JsonObject {
  let doc: unknown;
  try {
    doc = loadYaml(text, { filename: what });
  } catch (err) {
    throw new BootstrapError([new ConfigError('parse', '', `unable to parse YAML: ${(err as Error).message}`, what)]);
  }
  if (doc === undefined || doc === null) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new BootstrapError([new ConfigError('parse', '', `a bootstrap must be a mapping, not ${Array.isArray(doc) ? 'a list' : typeof doc}`, what)]);
  return withinLimits(doc as JsonObject, what, maxValues);
}

/** The document, if no reader after the parser could be made to explode on it (limits.ts). */
function withinLimits(doc: JsonObject, what: string, maxValues = MAX_VALUES): JsonObject {
  const refusal = documentLimitError(doc, maxValues);
  if (!refusal) return doc;
  // Within the bounds of a load of its own: too large only for this reader (readBootstrap's maxValues).
  if (maxValues < MAX_VALUES && !documentLimitError(doc)) throw new ReadTooLarge(`${what}: ${refusal}`);
  throw new BootstrapError([new ConfigError('too_large', '', `refused: ${refusal}`, what)]);
}

/** A recursive decoder that ran out of stack on a nested input says so, as a configuration error. */
function tooDeep(err: unknown, what: string): never {
  if (err instanceof RangeError) throw new BootstrapError([new ConfigError('too_large', '', 'refused: nested too deeply to read', what)]);
  throw err;
}

/**
 * A file of `type` in any of the formats (by extension), as raw canonical JSON, with the loader's
 * limits; a file that cannot be read or parsed is a BootstrapError naming it. Bootstrap files and
 * file-based xDS responses both come through here.
 */
export function readSource(path: string, root: protobuf.Root, type: protobuf.Type): Parsed {
  return parseSource(path, readWhole(path), root, type);
}

function readWhole(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch {
    throw new BootstrapError([configError('unreadable', '', `unable to read file: ${path}`)]);
  }
}

/** `data`, read from `path`, parsed by the format its extension names; a text format's bytes must be UTF-8, as protobuf's parsers require. */
function parseSource(path: string, data: Buffer, root: protobuf.Root, type: protobuf.Type, maxValues = MAX_VALUES): Parsed {
  const parsed = parseSourceAs(path, data, root, type, maxValues);
  if (bootstrapFormat(path) !== 'binary' && !isUtf8(data)) throw new BootstrapError(invalidUtf8(parsed.document, path));
  return parsed;
}

/** Where a document read from bytes that are not UTF-8 has its replaced characters (U+FFFD): each string's path; the file's when none is in a string. */
function invalidUtf8(document: unknown, file: string): ConfigError[] {
  const found: ConfigError[] = [];
  const walk = (v: unknown, at: string) => {
    if (typeof v === 'string') {
      if (v.includes('\uFFFD')) found.push(new ConfigError('parse', at || '(the document)', 'invalid UTF-8 in a string', file));
    } else if (Array.isArray(v)) v.forEach((item, i) => walk(item, `${at}[${i}]`));
    else if (v !== null && typeof v === 'object') for (const [k, item] of Object.entries(v)) walk(item, at ? `${at}.${k}` : k);
  };
  walk(document, '');
  return found.length ? found : [new ConfigError('parse', '', 'the file is not valid UTF-8', file)];
}

function parseSourceAs(path: string, data: Buffer, root: protobuf.Root, type: protobuf.Type, maxValues: number): Parsed {
  switch (bootstrapFormat(path)) {
    case 'binary': {
      let decoded: ReturnType<BinaryDecoder['decode']>;
      try {
        decoded = new BinaryDecoder(root).decode(type, data);
      } catch (err) {
        // Bytes that are not a protobuf message (a bad wire type, a length past the end) are the file's fault, not a bug.
        if (err instanceof RangeError && /call stack/i.test(err.message)) tooDeep(err, path);
        throw new BootstrapError([new ConfigError('parse', '', `malformed binary data (${(err as Error).message})`, path)]);
      }
      if (decoded.errors.length) throw new BootstrapError(decoded.errors.map((e) => e.from(path)));
      return { document: withinLimits(decoded.json, path, maxValues), unknownFields: decoded.unknownFields };
    }
    case 'text': {
      try {
        const parser = new TextFormatParser(root, data.toString('utf8'));
        const document = parser.parse(type);
        if (parser.errors.length) throw new BootstrapError(parser.errors.map((e) => e.from(path)));
        return { document: withinLimits(document, path, maxValues), unknownFields: parser.unknownFields };
      } catch (err) {
        if (err instanceof TextFormatError) throw new BootstrapError([new ConfigError('parse', '', `unable to parse text proto: ${err.message}`, path)]);
        tooDeep(err, path);
      }
    }
    case 'yaml':
      return { document: parseYaml(data.toString('utf8'), path, maxValues), unknownFields: [] };
    case 'json': {
      let doc: unknown;
      try {
        doc = JSON.parse(data.toString('utf8'));
      } catch (err) {
        throw new BootstrapError([new ConfigError('parse', '', `unable to parse JSON: ${(err as Error).message}`, path)]);
      }
      if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new BootstrapError([new ConfigError('parse', '', 'a bootstrap must be a JSON object', path)]);
      return { document: withinLimits(doc as JsonObject, path, maxValues), unknownFields: [] };
    }
  }
}

/** Reads, upgrades and validates one source; errors are prefixed with where they come from. */
function normalise(parsed: Parsed, label: string, src: BootstrapSource, root: protobuf.Root, type: protobuf.Type, errors: ConfigError[], warnings: string[], unknown: UnknownFieldUse[]) {
  let document = parsed.document;
  if (src.bootstrapVersion !== 3) {
    const upgraded = upgradeV2Bootstrap(document);
    document = upgraded.document;
    if (upgraded.changes.length) warnings.push(`${label ? `${label}: ` : ''}upgraded v2 configuration to v3: ${upgraded.changes.join('; ')}`);
  }
  const reader = new ProtoJsonReader(root, { unknownFields: src.allowUnknownStaticFields ? 'allow' : 'reject' });
  const result = reader.readMessage(type, document, '');
  const prefix = (e: ConfigError) => (label ? e.from(label) : e);
  for (const use of parsed.unknownFields) {
    if (src.allowUnknownStaticFields) reader.unknownFields.push(use);
    else errors.push(prefix(configError('unknown_field', use.path, `unknown field in ${use.typeName}`)));
  }
  errors.push(...reader.errors.map(prefix));
  unknown.push(...reader.unknownFields);
  for (const d of reader.deprecated) warnings.push(`${label ? `${label}: ` : ''}${d.path}: using deprecated option '${d.typeName}.${d.field}'`);
  return { bootstrap: result, anys: reader.anys };
}

/** Checks the options that say where the bootstrap is, reads its file, and fingerprints the lot. */
export function bootstrapSources(src: BootstrapSource): BootstrapSources {
  if (!src.configPath && !src.configYaml) {
    throw new BootstrapError([configError('missing', '', 'At least one of --config-path or --config-yaml should be non-empty')]);
  }
  if (src.bootstrapVersion !== undefined && src.bootstrapVersion !== 2 && src.bootstrapVersion !== 3) {
    throw new BootstrapError([configError('unsupported', '', `--bootstrap-version ${src.bootstrapVersion} is not supported (2 or 3)`)]);
  }
  if (src.bootstrapVersion === 2 && src.configPath && bootstrapFormat(src.configPath) === 'binary') {
    throw new BootstrapError([new ConfigError('unsupported', '', 'binary v2 bootstraps cannot be upgraded by this proxy; convert the file to v3 (or to YAML/JSON)', src.configPath)]);
  }
  return sourcesOf(src, src.configPath ? readWhole(src.configPath) : undefined);
}

/** The sources given the file's bytes (a hot restart's parent gets them from its child). */
export function sourcesOf(src: BootstrapSource, file: Buffer | undefined): BootstrapSources {
  const options: BootstrapSource = {
    configPath: src.configPath,
    configYaml: src.configYaml,
    bootstrapVersion: src.bootstrapVersion,
    allowUnknownStaticFields: src.allowUnknownStaticFields,
    disableExtensions: src.disableExtensions,
    serviceCluster: src.serviceCluster,
    serviceNode: src.serviceNode,
    serviceZone: src.serviceZone,
  };
  const hash = cryptoModule().createHash('sha256').update(`${buildIdentity()}\0${JSON.stringify(options)}\0`);
  if (file) hash.update(file);
  return { options, file, key: hash.digest() };
}

/**
 * Loads the bootstrap from `sources` (bootstrapSources). `read`, when given, is what
 * readBootstrap made of the same sources in another process of this build (a hot restart's
 * parent, whose schema is loaded); the result is the same as reading them here.
 */
export function loadBootstrap(src: BootstrapSource, sources: BootstrapSources = bootstrapSources(src), readElsewhere?: BootstrapRead, readHere: (sources: BootstrapSources) => BootstrapRead = readBootstrap): LoadedBootstrap {
  const read = readElsewhere ?? readHere(sources);
  if (read.refused) throw new BootstrapError(read.refused);
  const listenerNames = staticListenerNames(read.bootstrap);
  // Checked as it will run: --service-node and --service-cluster may be what gives the node its id (a pod's name, say).
  const bootstrap = applyNodeOverrides(read.bootstrap, src);
  const local = localChecks(bootstrap, listenerNames);
  // What an earlier error causes is left out: an error under a field that already failed (or
  // above it), and a route's "unknown cluster" once a cluster itself is in error.
  const clusterInError = [...read.failed, ...read.refusedFields].some((f) => f.startsWith('static_resources.clusters['));
  const errors = [...read.errors, ...local.errors.filter((e) => !followsFrom(e, read) && !(clusterInError && /^route: unknown (weighted |mirror )?cluster /.test(e.detail)))];
  if (errors.length) throw new BootstrapError(errors);
  return {
    bootstrap,
    unknownFields: read.unknownFields,
    warnings: [...read.warnings, ...bootstrapWarnings(read.bootstrap), ...unknownFieldWarnings(read.unknownFields)],
    tls: local.tls,
    listenerNames,
    handOver: { sources, read, readElsewhere: readElsewhere !== undefined },
  };
}

/** A field that failed to read leaves its parents half read; a field refused was read whole. */
function followsFrom(error: ConfigError, read: Pick<BootstrapRead, 'failed' | 'refusedFields'>): boolean {
  const path = error.path;
  return read.failed.some((f) => path.startsWith(f) || f.startsWith(path)) || read.refusedFields.some((f) => path.startsWith(f));
}

/**
 * A document too large for a reader that asked for a lower bound (readBootstrap's maxValues)
 * though within a load's own: not the sources' fault, so not a BootstrapError.
 */
export class ReadTooLarge extends Error {}

/**
 * The schema-dependent half of a load (BootstrapRead): a function of the sources alone.
 * `maxValues` below limits.ts's bound makes a document between the two throw ReadTooLarge (a
 * hot restart's parent reads for its child within a lower one: its main loop waits meanwhile).
 */
export function readBootstrap(sources: BootstrapSources, maxValues = MAX_VALUES): BootstrapRead {
  try {
    return readSources(sources.options, sources.file, maxValues);
  } catch (err) {
    if (!(err instanceof BootstrapError)) throw err;
    return { bootstrap: {}, warnings: [], unknownFields: [], errors: [], failed: [], refusedFields: [], refused: err.errors };
  }
}

function readSources(src: BootstrapSource, fileBytes: Buffer | undefined, maxValues: number): BootstrapRead {
  const root = envoySchema();
  const type = root.lookupType(BOOTSTRAP_TYPE);
  const errors: ConfigError[] = [];
  const warnings: string[] = [];
  const unknownFields: UnknownFieldUse[] = [];
  const anys: AnyUse[] = [];

  let bootstrap: JsonObject = {};
  if (src.configPath) {
    const file = normalise(parseSource(src.configPath, fileBytes!, root, type, maxValues), '', src, root, type, errors, warnings, unknownFields);
    if (file.bootstrap) bootstrap = file.bootstrap;
    anys.push(...file.anys);
  }
  if (src.configYaml) {
    const overlay = normalise({ document: parseYaml(src.configYaml, '--config-yaml', maxValues), unknownFields: [] }, '--config-yaml', src, root, type, errors, warnings, unknownFields);
    if (overlay.bootstrap) bootstrap = mergeMessage(type, bootstrap, overlay.bootstrap);
    anys.push(...overlay.anys);
  }
  // Every stage runs, so that one run reports every problem in the file (a field that cannot be
  // read does not hide an extension that is refused).
  const failed = errors.map((e) => e.path);
  const fieldErrors: ConfigError[] = [];
  checkConstraints(type, bootstrap, '', fieldErrors);
  checkSupportedFields(type, bootstrap, '', fieldErrors);
  checkAnyUses(anys, parseDisabledExtensions(src.disableExtensions, (w) => warnings.push(w)), fieldErrors);
  errors.push(...fieldErrors.filter((e) => !followsFrom(e, { failed, refusedFields: [] })));
  return { bootstrap, warnings, unknownFields, errors, failed, refusedFields: fieldErrors.map((e) => e.path) };
}

/** The whole-bootstrap checks (some look at the file system) and the TLS material, read now. */
function localChecks(bootstrap: JsonObject, listenerNames: readonly string[]): { errors: ConfigError[]; tls: LoadedTls } {
  const errors: ConfigError[] = [];
  checkBootstrapSemantics(bootstrap, errors);
  return { errors, tls: loadAllTls(bootstrap, listenerNames, readDataSource, errors) };
}

function unknownFieldWarnings(unknownFields: UnknownFieldUse[]): string[] {
  const seen = new Set<string>();
  const warnings: string[] = [];
  for (const u of unknownFields) {
    const key = `${u.typeName}.${u.field}`;
    if (seen.has(key)) continue;
    seen.add(key);
    warnings.push(`unknown field '${u.field}' in ${u.typeName} (at ${u.path}) ignored because of --allow-unknown-static-fields`);
  }
  return warnings;
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
