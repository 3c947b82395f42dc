import { list, obj } from '../../../config/access.js';
import { configError, type ConfigError } from '../../../config/config-error.js';
import type { JsonObject } from '../../../config/proto-json.js';
import { canonicalText } from '../../../config/resource-hash.js';

/**
 * Secrets (envoy.extensions.transport_sockets.tls.v3.Secret), as Envoy's secret manager keeps
 * them: the bootstrap's `static_resources.secrets`, one name space per kind, and the secrets a TLS
 * context names by `SdsSecretConfig` — by name alone (a static secret) or with an `sds_config` (a
 * secret from SDS, which the supervisor subscribes to: supervisor/xds/secrets.ts). A context
 * loads (./context.ts) against a SecretLookup; one whose SDS secrets have not come is not ready.
 */

export const SECRET_TYPE = 'envoy.extensions.transport_sockets.tls.v3.Secret';
export const SECRET_TYPE_URL = `type.googleapis.com/${SECRET_TYPE}`;

export type SecretKind = 'tls_certificate' | 'validation_context' | 'session_ticket_keys' | 'generic_secret';
export const SECRET_KINDS: readonly SecretKind[] = ['tls_certificate', 'validation_context', 'session_ticket_keys', 'generic_secret'];

/** Each kind's message, as Envoy's errors name it. */
const MESSAGE: Record<SecretKind, string> = {
  tls_certificate: 'TlsCertificate',
  validation_context: 'CertificateValidationContext',
  session_ticket_keys: 'TlsSessionTicketKeys',
  generic_secret: 'GenericSecret',
};

/** Envoy's words for a static secret a context names and the bootstrap does not have. */
const UNKNOWN_STATIC: Record<SecretKind, string> = {
  tls_certificate: 'Unknown static secret',
  validation_context: 'Unknown static certificate validation context',
  session_ticket_keys: 'Unknown tls session ticket keys',
  generic_secret: 'Unknown static generic secret',
};

export function secretKindOf(secret: JsonObject): SecretKind | undefined {
  return SECRET_KINDS.find((k) => secret[k] !== undefined);
}

/** A dynamic secret's identity: its kind, name and config source (Envoy shares one SdsApi per kind, source and name). */
export function dynamicSecretKey(kind: SecretKind, name: string, source: JsonObject): string {
  return `${kind}\n${name}\n${canonicalText(source)}`;
}

/** The secret's name in a dynamicSecretKey. */
export function secretNameOfKey(key: string): string {
  return key.split('\n')[1] ?? key;
}

/** What loading a TLS context asks of the secrets. */
export interface SecretLookup {
  /** A bootstrap secret of this kind, by name. */
  staticSecret(kind: SecretKind, name: string): { secret: JsonObject; path: string } | undefined;
  /**
   * A secret from SDS as it stands now (files it names read and inlined), or undefined while it
   * has not come. The supervisor's lookup subscribes to it here; a source it cannot use is an
   * error at `path`.
   */
  dynamicSecret(kind: SecretKind, name: string, source: JsonObject, path: string, errors: ConfigError[]): JsonObject | undefined;
}

/** The bootstrap's secrets, checked as Envoy's addStaticSecret checks them. */
export class StaticSecrets implements SecretLookup {
  private readonly byKind = new Map<SecretKind, Map<string, { secret: JsonObject; path: string }>>();
  readonly all: { name: string; secret: JsonObject }[] = [];

  constructor(bootstrap: JsonObject, errors: ConfigError[]) {
    list(obj(bootstrap.static_resources).secrets).forEach((secret, i) => {
      const path = `static_resources.secrets[${i}]`;
      const name = String(secret.name ?? '');
      const kind = secretKindOf(secret);
      if (!kind) {
        errors.push(configError('missing', path, 'Secret type not implemented (set tls_certificate, validation_context, session_ticket_keys or generic_secret)'));
        return;
      }
      const named = this.byKind.get(kind) ?? this.byKind.set(kind, new Map()).get(kind)!;
      if (named.has(name)) {
        errors.push(configError('duplicate', `${path}.name`, `Duplicate static ${MESSAGE[kind]} secret name ${name}`));
        return;
      }
      named.set(name, { secret, path });
      this.all.push({ name, secret });
    });
  }

  staticSecret(kind: SecretKind, name: string): { secret: JsonObject; path: string } | undefined {
    return this.byKind.get(kind)?.get(name);
  }

  /** Loading alone (the bootstrap's first reading, --mode validate) gets no secret from SDS: the context waits for it. */
  dynamicSecret(): JsonObject | undefined {
    return undefined;
  }
}

/** A part of a TLS context given by a secret, or inline: its JSON and the path its errors name. */
export interface SecretPart {
  json: JsonObject;
  path: string;
  /** The secret's name, when a secret gave it (Envoy names such a certificate's statistics by it). */
  secretName?: string;
  /** From SDS: files it names were read when it came (and are watched there). */
  dynamic: boolean;
}

/** What resolving a context's secrets found: the dynamic secrets it uses, and those that have not come (both by dynamicSecretKey). */
export interface SecretUse {
  keys: string[];
  notReady: string[];
}

/**
 * The part an SdsSecretConfig names (`kind`), from the lookup: undefined when it is unknown (an
 * error said so) or has not come (`use.notReady` says so).
 */
export function resolveSecretRef(kind: SecretKind, ref: JsonObject, path: string, lookup: SecretLookup, use: SecretUse, errors: ConfigError[]): SecretPart | undefined {
  const name = String(ref.name ?? '');
  if (name === '') {
    errors.push(configError('missing', `${path}.name`, 'an SdsSecretConfig needs a name'));
    return undefined;
  }
  if (ref.sds_config === undefined) {
    const found = lookup.staticSecret(kind, name);
    if (!found) {
      errors.push(configError('unknown_reference', `${path}.name`, `${UNKNOWN_STATIC[kind]}: ${name}`));
      return undefined;
    }
    return { json: obj(found.secret[kind]), path: `${found.path}.${kind}`, secretName: name, dynamic: false };
  }
  const source = obj(ref.sds_config);
  const key = dynamicSecretKey(kind, name, source);
  use.keys.push(key);
  const secret = lookup.dynamicSecret(kind, name, source, `${path}.sds_config`, errors);
  if (!secret) {
    use.notReady.push(key);
    return undefined;
  }
  return { json: obj(secret[kind]), path: `secret '${name}' (from SDS).${kind}`, secretName: name, dynamic: true };
}

const isDataSource = (v: JsonObject) => ['filename', 'inline_string', 'inline_bytes', 'environment_variable'].some((k) => v[k] !== undefined);

/**
 * combined_validation_context: the SDS secret merged over the default, as protobuf's MergeFrom
 * (Envoy's getCombinedValidationContextConfig): fields the secret sets win (a DataSource whole),
 * booleans end up or-ed, lists are joined with the default's entries first.
 */
export function mergeValidationContexts(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    if (Array.isArray(v) && Array.isArray(b)) out[k] = [...b, ...v];
    else if (v !== null && typeof v === 'object' && !Array.isArray(v) && b !== null && typeof b === 'object' && !Array.isArray(b) && !isDataSource(v as JsonObject)) out[k] = mergeValidationContexts(b as JsonObject, v as JsonObject);
    else if (v === false && b === true) continue;
    else out[k] = v;
  }
  return out;
}

/** The DataSources of a secret that name files (Envoy's getDataSourceFilenames), by where they are in it. */
export function secretFiles(secret: JsonObject): string[] {
  const files: string[] = [];
  const add = (ds: unknown) => {
    const f = obj(ds).filename;
    if (typeof f === 'string') files.push(f);
  };
  const cert = obj(secret.tls_certificate);
  add(cert.certificate_chain);
  add(cert.private_key);
  add(cert.password);
  const validation = obj(secret.validation_context);
  add(validation.trusted_ca);
  add(validation.crl);
  const generic = obj(secret.generic_secret);
  add(generic.secret);
  for (const ds of Object.values(obj(generic.secrets))) add(ds);
  return files;
}

/** The directory a secret's files are watched by (its `watched_directory`), if it names one. */
export function secretWatchedDirectory(secret: JsonObject): string | undefined {
  const dir = obj(obj(secret.tls_certificate).watched_directory).path ?? obj(obj(secret.validation_context).watched_directory).path;
  return typeof dir === 'string' ? dir : undefined;
}

/**
 * A secret from SDS with the files it names read in (`read`: a file's bytes), as Envoy's
 * resolveSecret inlines them: the contexts and the config dump see inline bytes. A generic secret
 * is kept as it came (its users read it), as Envoy keeps it.
 */
export function inlineSecretFiles(secret: JsonObject, read: (file: string) => Buffer): JsonObject {
  if (secret.generic_secret !== undefined) return secret;
  const inline = (ds: unknown): unknown => {
    const f = obj(ds).filename;
    return typeof f === 'string' ? { inline_bytes: read(f).toString('base64') } : ds;
  };
  const out: JsonObject = { ...secret };
  if (secret.tls_certificate !== undefined) {
    const c = obj(secret.tls_certificate);
    out.tls_certificate = { ...c, ...(c.certificate_chain ? { certificate_chain: inline(c.certificate_chain) } : {}), ...(c.private_key ? { private_key: inline(c.private_key) } : {}), ...(c.password ? { password: inline(c.password) } : {}) } as JsonObject;
  }
  if (secret.validation_context !== undefined) {
    const v = obj(secret.validation_context);
    out.validation_context = { ...v, ...(v.trusted_ca ? { trusted_ca: inline(v.trusted_ca) } : {}), ...(v.crl ? { crl: inline(v.crl) } : {}) } as JsonObject;
  }
  return out;
}

/** Every SdsSecretConfig of a TLS context's config (its typed_config), with its path under `path`. */
export function secretRefsOf(config: JsonObject, path: string): { path: string; ref: JsonObject }[] {
  const common = obj(config.common_tls_context);
  const cp = `${path}.common_tls_context`;
  const refs = list(common.tls_certificate_sds_secret_configs).map((ref, i) => ({ path: `${cp}.tls_certificate_sds_secret_configs[${i}]`, ref }));
  if (common.validation_context_sds_secret_config !== undefined) refs.push({ path: `${cp}.validation_context_sds_secret_config`, ref: obj(common.validation_context_sds_secret_config) });
  const combined = obj(common.combined_validation_context);
  if (combined.validation_context_sds_secret_config !== undefined) refs.push({ path: `${cp}.combined_validation_context.validation_context_sds_secret_config`, ref: obj(combined.validation_context_sds_secret_config) });
  if (config.session_ticket_keys_sds_secret_config !== undefined) refs.push({ path: `${path}.session_ticket_keys_sds_secret_config`, ref: obj(config.session_ticket_keys_sds_secret_config) });
  return refs;
}

/** envoy.admin.v3.SecretsConfigDump's three lists, unredacted (the admin redacts). */
export interface SecretsDump {
  static: { name: string; secret: JsonObject }[];
  active: { name: string; versionInfo: string; lastUpdatedMs: number; secret: JsonObject }[];
  warming: { name: string; lastUpdatedMs: number }[];
}
