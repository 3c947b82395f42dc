import { innerTransportSocket, validateUpstreamProxyProtocol } from '../proxy-protocol/upstream-proxy-protocol.js';
import type { SecureContextOptions } from 'node:tls';
import { cryptoModule, tlsModule } from '../../../builtins.js';
import { list, obj } from '../../../config/access.js';
import type { JsonObject } from '../../../config/proto-json.js';
import type { Cluster, Listener } from '../../../config/envoy-types.js';
import { typeNameOfUrl } from '../../../config/wkt.js';
import { configError, type ConfigError } from '../../../config/config-error.js';
import { checkRawBuffer } from '../raw-buffer/raw-buffer.js';
import { sessionResumptionOf, type SessionResumption } from './session-resumption.js';
import { mergeValidationContexts, resolveSecretRef, StaticSecrets, type SecretLookup, type SecretPart, type SecretUse } from './secrets.js';

/**
 * TLS contexts (`transport_socket` with envoy.transport_sockets.tls) as the supervisor loads
 * them: every certificate, key and CA read once, when the bootstrap loads (a hot restart's new
 * epoch reads them again), checked by building a real secure context, and carried to the
 * workers (which build their own from the same bytes) and to the admin process (/certs).
 */

export const DOWNSTREAM_TLS = 'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
export const UPSTREAM_TLS = 'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';

/** PEM text and where it came from: a file name, or `<inline>` (as Envoy's /certs prints it). */
export interface PemSource {
  pem: string;
  path: string;
  /** Given in the configuration itself (inline_string, inline_bytes), not read from a file or the environment. */
  inline: boolean;
  /** The secret that gave it, if one did (Envoy names its statistics by it). */
  secretName?: string;
}

export interface TlsCertificate {
  chain: PemSource;
  key: string;
  passphrase?: string;
}

/** A match_typed_subject_alt_names entry: a SAN type (DNS, URI, EMAIL, IP_ADDRESS) and a StringMatcher. */
export interface SanMatcherConfig {
  sanType: string;
  matcher: JsonObject;
}

export interface TlsContext {
  side: 'downstream' | 'upstream';
  /** The listener (and chain index) or the cluster the context belongs to. */
  owner: string;
  certificates: TlsCertificate[];
  ca: PemSource | undefined;
  alpn: string[];
  /** Upstream: the SNI to send (none when empty, as Envoy). */
  sni: string;
  /** Downstream: a client without a certificate is refused. */
  requireClientCertificate: boolean;
  sanMatchers: SanMatcherConfig[];
  minVersion: SecureContextOptions['minVersion'];
  maxVersion: SecureContextOptions['maxVersion'];
  ciphers: string | undefined;
  ecdhCurve: string | undefined;
  /** Downstream session resumption (./session-resumption.ts). */
  resumption?: SessionResumption;
  /** Upstream: how many sessions to keep for resumption (max_session_keys; 1 unless configured, 0: none). */
  maxSessionKeys?: number;
  /** The secrets from SDS it is made of (./secrets.ts dynamicSecretKey), if any. */
  secrets?: string[];
  /**
   * Those that have not come (keys too): the context is not ready (no certificate, no CA) and
   * its connections fail, counted as Envoy's `*_context_secrets_not_ready`.
   */
  notReady?: string[];
}

/** A context of no secrets from SDS, or of them all (it can handshake). */
export function tlsReady(c: TlsContext): boolean {
  return !c.notReady?.length;
}

const VERSIONS: Record<string, SecureContextOptions['minVersion']> = {
  TLSv1_0: 'TLSv1',
  TLSv1_1: 'TLSv1.1',
  TLSv1_2: 'TLSv1.2',
  TLSv1_3: 'TLSv1.3',
};

/** The transport socket's TLS context config, if it is one (name or typed_config). */
export function tlsContextConfig(transportSocket: unknown): { typeName: string; config: JsonObject } | undefined {
  const ts = obj(transportSocket);
  const typed = obj(ts.typed_config);
  if (typeof typed['@type'] !== 'string') return undefined;
  const typeName = typeNameOfUrl(typed['@type']);
  if (typeName !== DOWNSTREAM_TLS && typeName !== UPSTREAM_TLS) return undefined;
  return { typeName, config: typed };
}

/** A message field that may be absent: undefined then, else the message. */
const optional = (v: unknown): JsonObject | undefined => (v === undefined ? undefined : obj(v));

function readPem(ds: JsonObject | undefined, path: string, errors: ConfigError[], read: (ds: JsonObject) => Buffer | undefined, secretName?: string): PemSource | undefined {
  if (!ds) return undefined;
  try {
    const data = read(ds);
    if (data === undefined) {
      errors.push(configError('missing', path, 'no data (set filename, inline_string, inline_bytes or environment_variable)'));
      return undefined;
    }
    return { pem: data.toString('utf8'), path: typeof ds.filename === 'string' ? ds.filename : '<inline>', inline: ds.inline_string !== undefined || ds.inline_bytes !== undefined, ...(secretName !== undefined ? { secretName } : {}) };
  } catch (err) {
    // Phrased by field: the file the field names, and why it could not be read.
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EACCES' ? 'permission denied' : e.code === 'EISDIR' ? 'it is a directory' : e.message;
    errors.push(typeof ds.filename === 'string' ? configError('unreadable', `${path}.filename`, `unable to read '${ds.filename}': ${why}`) : configError('unreadable', path, e.message));
    return undefined;
  }
}

const NOT_SDS_DIRECTORY = 'watched_directory is honoured only on a secret from SDS (an SdsSecretConfig with sds_config), as in Envoy, which reads these files once otherwise';

/**
 * The parts of a context its secrets give (./secrets.ts), beside those given inline: the
 * certificates, the validation context (a combined one merged), the session ticket keys.
 */
function contextParts(side: 'downstream' | 'upstream', config: JsonObject, path: string, secrets: SecretLookup, use: SecretUse, errors: ConfigError[]) {
  const common = obj(config.common_tls_context);
  const cp = `${path}.common_tls_context`;
  const certificates: SecretPart[] = list(common.tls_certificates).map((json, i) => ({ json, path: `${cp}.tls_certificates[${i}]`, dynamic: false }));
  const sdsCertificates = list(common.tls_certificate_sds_secret_configs);
  if (side === 'downstream' && certificates.length && sdsCertificates.length) errors.push(configError('invalid', `${cp}.tls_certificate_sds_secret_configs`, 'SDS and non-SDS TLS certificates may not be mixed in server contexts'));
  sdsCertificates.forEach((ref, i) => {
    const part = resolveSecretRef('tls_certificate', ref, `${cp}.tls_certificate_sds_secret_configs[${i}]`, secrets, use, errors);
    if (part) certificates.push(part);
  });
  let validation: SecretPart | undefined = common.validation_context !== undefined ? { json: obj(common.validation_context), path: `${cp}.validation_context`, dynamic: false } : undefined;
  if (common.validation_context_sds_secret_config !== undefined) validation = resolveSecretRef('validation_context', obj(common.validation_context_sds_secret_config), `${cp}.validation_context_sds_secret_config`, secrets, use, errors);
  if (common.combined_validation_context !== undefined) {
    const combined = obj(common.combined_validation_context);
    const p = `${cp}.combined_validation_context`;
    const dynamic = resolveSecretRef('validation_context', obj(combined.validation_context_sds_secret_config), `${p}.validation_context_sds_secret_config`, secrets, use, errors);
    const base = obj(combined.default_validation_context);
    if (obj(base.watched_directory).path !== undefined) errors.push(configError('unsupported', `${p}.default_validation_context.watched_directory`, NOT_SDS_DIRECTORY));
    if (dynamic) validation = { ...dynamic, json: mergeValidationContexts(base, dynamic.json), path: p };
  }
  let ticketKeys: JsonObject | undefined = config.session_ticket_keys !== undefined ? obj(config.session_ticket_keys) : undefined;
  if (config.session_ticket_keys_sds_secret_config !== undefined) ticketKeys = resolveSecretRef('session_ticket_keys', obj(config.session_ticket_keys_sds_secret_config), `${path}.session_ticket_keys_sds_secret_config`, secrets, use, errors)?.json;
  for (const part of [...certificates, ...(validation ? [validation] : [])]) {
    if (!part.dynamic && obj(part.json.watched_directory).path !== undefined) errors.push(configError('unsupported', `${part.path}.watched_directory`, NOT_SDS_DIRECTORY));
  }
  return { certificates, validation, ticketKeys };
}

/**
 * One TLS context from its config (`path` names it in errors), its secrets from `secrets`. `read`
 * resolves a DataSource (files are read here, so a later change to a file takes effect on the next
 * hot restart; a secret from SDS has had its files read when it came).
 */
export function loadTlsContext(
  side: 'downstream' | 'upstream',
  owner: string,
  config: JsonObject,
  path: string,
  errors: ConfigError[],
  read: (ds: JsonObject) => Buffer | undefined,
  secrets: SecretLookup,
): TlsContext | undefined {
  const before = errors.length;
  const common = obj(config.common_tls_context);
  const cp = `${path}.common_tls_context`;
  const use: SecretUse = { keys: [], notReady: [] };
  const parts = contextParts(side, config, path, secrets, use, errors);
  const certificates: TlsCertificate[] = [];
  for (const { json: c, path: p, secretName } of parts.certificates) {
    const chain = readPem(optional(c.certificate_chain), `${p}.certificate_chain`, errors, read, secretName);
    const key = readPem(optional(c.private_key), `${p}.private_key`, errors, read);
    const password = readPem(optional(c.password), `${p}.password`, errors, read);
    if (!chain || !key) {
      if (errors.length === before) errors.push(configError('missing', p, `a certificate needs certificate_chain and private_key${secretName !== undefined ? ` (certificate chain not set in secret '${secretName}')` : ''}`));
      continue;
    }
    certificates.push({ chain, key: key.pem, ...(password ? { passphrase: password.pem } : {}) });
  }
  const validation = parts.validation?.json ?? {};
  const ca = readPem(optional(validation.trusted_ca), `${parts.validation?.path ?? `${cp}.validation_context`}.trusted_ca`, errors, read, parts.validation?.secretName);
  const sanMatchers = list(validation.match_typed_subject_alt_names).map((m) => ({ sanType: String(m.san_type ?? 'SAN_TYPE_UNSPECIFIED'), matcher: obj(m.matcher) }));
  for (const m of list(validation.match_subject_alt_names)) sanMatchers.push({ sanType: 'ANY', matcher: m });
  const waiting = use.notReady.length > 0;
  // A certificate that could not be read has said so already: "no certificate" would only repeat it.
  if (side === 'downstream' && !waiting && certificates.length === 0 && errors.length === before) errors.push(configError('missing', `${cp}.tls_certificates`, 'a listener\'s TLS context needs a certificate'));
  if (side === 'downstream' && !waiting && config.require_client_certificate === true && !ca) {
    errors.push(configError('missing', `${path}.require_client_certificate`, 'client certificates need common_tls_context.validation_context.trusted_ca to be verified against'));
  }
  const params = obj(common.tls_params);
  // Envoy's equal-preference groups ("[A|B]") become a plain list for OpenSSL.
  const ciphers = list(params.cipher_suites as unknown).map((c) => String(c).replace(/[[\]]/g, '').replaceAll('|', ':'));
  const curves = list(params.ecdh_curves as unknown).map(String);
  const context: TlsContext = {
    side,
    owner,
    certificates,
    ca,
    alpn: list(common.alpn_protocols as unknown).map(String),
    sni: typeof config.sni === 'string' ? config.sni : '',
    requireClientCertificate: config.require_client_certificate === true,
    sanMatchers,
    minVersion: VERSIONS[String(params.tls_minimum_protocol_version)] ?? 'TLSv1.2',
    maxVersion: VERSIONS[String(params.tls_maximum_protocol_version)] ?? 'TLSv1.3',
    ciphers: ciphers.length ? ciphers.join(':') : undefined,
    ecdhCurve: curves.length ? curves.join(':') : undefined,
    ...(side === 'upstream' ? { maxSessionKeys: config.max_session_keys === undefined ? 1 : Number(typeof config.max_session_keys === 'object' ? obj(config.max_session_keys).value : config.max_session_keys) } : {}),
    ...(side === 'downstream' ? { resumption: sessionResumptionOf({ ...config, ...(parts.ticketKeys ? { session_ticket_keys: parts.ticketKeys } : {}) }, path, errors, read) } : {}),
    ...(use.keys.length ? { secrets: [...new Set(use.keys)] } : {}),
    ...(waiting ? { notReady: [...new Set(use.notReady)] } : {}),
  };
  if (errors.length > before) return undefined;
  // Not ready: nothing to check until its secrets come (it is loaded again then).
  if (waiting) return context;
  // OpenSSL's own check: a key that does not match its certificate, a wrong password, an unknown cipher.
  try {
    tlsModule().createSecureContext(secureContextOptions(context));
  } catch (err) {
    errors.push(configError('load_failed', path, (err as Error).message));
    return undefined;
  }
  for (const c of [...certificates.map((x) => x.chain), ...(ca ? [ca] : [])]) {
    try {
      new (cryptoModule().X509Certificate)(c.pem);
    } catch (err) {
      errors.push(configError('load_failed', path, `${c.path}: not a PEM certificate (${(err as Error).message})`));
      return undefined;
    }
  }
  return context;
}

/** node:tls options for the context (workers add what is side-specific: ALPN, SNI, verification). */
export function secureContextOptions(c: TlsContext): SecureContextOptions {
  return {
    cert: c.certificates.map((x) => x.chain.pem),
    key: c.certificates.map((x) => (x.passphrase !== undefined ? { pem: x.key, passphrase: x.passphrase } : { pem: x.key })),
    ...(c.ca ? { ca: c.ca.pem } : {}),
    minVersion: c.minVersion,
    maxVersion: c.maxVersion,
    ...(c.ciphers ? { ciphers: c.ciphers } : {}),
    ...(c.ecdhCurve ? { ecdhCurve: c.ecdhCurve } : {}),
  };
}

/** Every TLS context of the bootstrap's listeners and clusters, keyed as workers look them up. */
export interface LoadedTls {
  /** `<listener name>#<filter chain index>` (the default chain is `#default`). */
  listeners: Record<string, TlsContext>;
  /** By cluster name (its transport_socket's), and by clusterMatchKey (a transport_socket_matches entry's). */
  clusters: Record<string, TlsContext>;
}

/** Where a cluster's transport_socket_matches entry's context is kept beside the cluster's own (a name holds no NUL). */
export function clusterMatchKey(cluster: string, match: number): string {
  return `${cluster}\u0000${match}`;
}

/** A clusterMatchKey's cluster and match, or undefined for a cluster's own key. */
export function parseClusterMatchKey(key: string): { cluster: string; match: number } | undefined {
  const at = key.indexOf('\u0000');
  return at < 0 ? undefined : { cluster: key.slice(0, at), match: Number(key.slice(at + 1)) };
}

export function listenerChainKey(listener: string, chain: number | string): string {
  return `${listener}#${chain}`;
}

/** A listener's TLS contexts, by filter chain (`0`, `1`, …, `default`); `path` names the listener in errors. */
export function loadListenerTls(l: Listener | JsonObject, path: string, read: (ds: JsonObject) => Buffer | undefined, errors: ConfigError[], secrets: SecretLookup): Record<string, TlsContext> {
  const loaded: Record<string, TlsContext> = {};
  const name = String(l.name ?? '');
  const chains: [string, JsonObject, string][] = list(l.filter_chains).map((c, ci) => [String(ci), c, `${path}.filter_chains[${ci}]`]);
  if (l.default_filter_chain) chains.push(['default', obj(l.default_filter_chain), `${path}.default_filter_chain`]);
  for (const [key, chain, chainPath] of chains) {
    if (!chain.transport_socket) continue;
    const tls = tlsContextConfig(chain.transport_socket);
    if (!tls) {
      checkRawBuffer(chain.transport_socket, `${chainPath}.transport_socket`, 'a DownstreamTlsContext', errors);
      continue;
    }
    const tsPath = `${chainPath}.transport_socket.typed_config`;
    if (tls.typeName !== DOWNSTREAM_TLS) {
      errors.push(configError('wrong_extension', tsPath, `a listener's transport socket takes a DownstreamTlsContext, not ${tls.typeName}`));
      continue;
    }
    const context = loadTlsContext('downstream', `listener ${name}`, tls.config, tsPath, errors, read, secrets);
    if (context) loaded[key] = context;
  }
  return loaded;
}

/**
 * `listenerNames`: each bootstrap listener's name, as the load minted them (staticListenerNames).
 * Their secrets are the bootstrap's; those from SDS have not come yet (the supervisor loads such
 * contexts again once they do).
 */
export function loadAllTls(bootstrap: JsonObject, listenerNames: readonly string[], read: (ds: JsonObject) => Buffer | undefined, errors: ConfigError[]): LoadedTls {
  const loaded: LoadedTls = { listeners: {}, clusters: {} };
  const secrets = new StaticSecrets(bootstrap, errors);
  const resources = obj(bootstrap.static_resources);
  list(resources.listeners).forEach((l, li) => {
    const name = listenerNames[li]!;
    for (const [key, context] of Object.entries(loadListenerTls(l, `static_resources.listeners[${li}]`, read, errors, secrets))) loaded.listeners[listenerChainKey(name, key)] = context;
  });
  list(resources.clusters).forEach((c, i) => {
    const context = loadClusterTls(c, `static_resources.clusters[${i}]`, read, errors, secrets);
    if (context) loaded.clusters[String(c.name)] = context;
    loadClusterMatchTls(c, `static_resources.clusters[${i}]`, read, errors, secrets).forEach((m, j) => {
      if (m) loaded.clusters[clusterMatchKey(String(c.name), j)] = m;
    });
  });
  return loaded;
}

/**
 * A cluster's TLS context, if its transport socket is TLS; with `match`, that of its
 * transport_socket_matches entry. `path` names the cluster in errors.
 */
export function loadClusterTls(c: Cluster | JsonObject, path: string, read: (ds: JsonObject) => Buffer | undefined, errors: ConfigError[], secrets: SecretLookup, match?: number): TlsContext | undefined {
  const outer = match === undefined ? c.transport_socket : obj(list(c.transport_socket_matches)[match]).transport_socket;
  const wrapped = match === undefined ? `${path}.transport_socket` : `${path}.transport_socket_matches[${match}].transport_socket`;
  if (!outer) return undefined;
  validateUpstreamProxyProtocol(outer, wrapped, errors);
  // A PROXY header goes first; the connection then speaks the socket it wraps.
  const socket = innerTransportSocket(outer);
  const at = socket === outer ? wrapped : `${wrapped}.typed_config.transport_socket`;
  const tls = tlsContextConfig(socket);
  if (!tls) {
    checkRawBuffer(socket, at, 'an UpstreamTlsContext', errors);
    return undefined;
  }
  const tsPath = `${at}.typed_config`;
  if (tls.typeName !== UPSTREAM_TLS) {
    errors.push(configError('wrong_extension', tsPath, `a cluster's transport socket takes an UpstreamTlsContext, not ${tls.typeName}`));
    return undefined;
  }
  return loadTlsContext('upstream', `cluster ${String(c.name)}`, tls.config, tsPath, errors, read, secrets);
}

/** Each of a cluster's transport_socket_matches entries' TLS context (undefined for a plaintext one). */
export function loadClusterMatchTls(c: Cluster | JsonObject, path: string, read: (ds: JsonObject) => Buffer | undefined, errors: ConfigError[], secrets: SecretLookup): (TlsContext | undefined)[] {
  return list(c.transport_socket_matches).map((_, i) => loadClusterTls(c, path, read, errors, secrets, i));
}
