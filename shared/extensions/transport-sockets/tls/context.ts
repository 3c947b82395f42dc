import type { SecureContextOptions } from 'node:tls';
import { cryptoModule, tlsModule } from '../../../builtins.js';
import { list, obj } from '../../../config/access.js';
import type { JsonObject } from '../../../config/proto-json.js';
import { typeNameOfUrl } from '../../../config/wkt.js';
import { configError, type ConfigError } from '../../../config/config-error.js';
import { checkRawBuffer } from '../raw-buffer/raw-buffer.js';
import { sessionResumptionOf, type SessionResumption } from './session-resumption.js';

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

function readPem(ds: JsonObject | undefined, path: string, errors: ConfigError[], read: (ds: JsonObject) => Buffer | undefined): PemSource | undefined {
  if (!ds) return undefined;
  try {
    const data = read(ds);
    if (data === undefined) {
      errors.push(configError('missing', path, 'no data (set filename, inline_string, inline_bytes or environment_variable)'));
      return undefined;
    }
    return { pem: data.toString('utf8'), path: typeof ds.filename === 'string' ? ds.filename : '<inline>', inline: ds.inline_string !== undefined || ds.inline_bytes !== undefined };
  } catch (err) {
    // Phrased by field: the file the field names, and why it could not be read.
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EACCES' ? 'permission denied' : e.code === 'EISDIR' ? 'it is a directory' : e.message;
    errors.push(typeof ds.filename === 'string' ? configError('unreadable', `${path}.filename`, `unable to read '${ds.filename}': ${why}`) : configError('unreadable', path, e.message));
    return undefined;
  }
}

/**
 * One TLS context from its config (`path` names it in errors). `read` resolves a DataSource
 * (files are read here, so a later change to a file takes effect on the next hot restart).
 */
export function loadTlsContext(
  side: 'downstream' | 'upstream',
  owner: string,
  config: JsonObject,
  path: string,
  errors: ConfigError[],
  read: (ds: JsonObject) => Buffer | undefined,
): TlsContext | undefined {
  const before = errors.length;
  const common = obj(config.common_tls_context);
  const cp = `${path}.common_tls_context`;
  const certificates: TlsCertificate[] = [];
  list(common.tls_certificates).forEach((c, i) => {
    const p = `${cp}.tls_certificates[${i}]`;
    const chain = readPem(optional(c.certificate_chain), `${p}.certificate_chain`, errors, read);
    const key = readPem(optional(c.private_key), `${p}.private_key`, errors, read);
    const password = readPem(optional(c.password), `${p}.password`, errors, read);
    if (!chain || !key) {
      if (errors.length === before) errors.push(configError('missing', p, 'a certificate needs certificate_chain and private_key'));
      return;
    }
    certificates.push({ chain, key: key.pem, ...(password ? { passphrase: password.pem } : {}) });
  });
  const validation = obj(common.validation_context);
  const ca = readPem(optional(validation.trusted_ca), `${cp}.validation_context.trusted_ca`, errors, read);
  const sanMatchers = list(validation.match_typed_subject_alt_names).map((m) => ({ sanType: String(m.san_type ?? 'SAN_TYPE_UNSPECIFIED'), matcher: obj(m.matcher) }));
  for (const m of list(validation.match_subject_alt_names)) sanMatchers.push({ sanType: 'ANY', matcher: m });
  // A certificate that could not be read has said so already: "no certificate" would only repeat it.
  if (side === 'downstream' && certificates.length === 0 && errors.length === before) errors.push(configError('missing', `${cp}.tls_certificates`, 'a listener\'s TLS context needs a certificate'));
  if (side === 'downstream' && config.require_client_certificate === true && !ca) {
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
    ...(side === 'downstream' ? { resumption: sessionResumptionOf(config, path, errors, read) } : {}),
  };
  if (errors.length > before) return undefined;
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
  clusters: Record<string, TlsContext>;
}

export function listenerChainKey(listener: string, chain: number | string): string {
  return `${listener}#${chain}`;
}

/** A listener's TLS contexts, by filter chain (`0`, `1`, …, `default`); `path` names the listener in errors. */
export function loadListenerTls(l: JsonObject, path: string, read: (ds: JsonObject) => Buffer | undefined, errors: ConfigError[]): Record<string, TlsContext> {
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
    const context = loadTlsContext('downstream', `listener ${name}`, tls.config, tsPath, errors, read);
    if (context) loaded[key] = context;
  }
  return loaded;
}

/** `listenerNames`: each bootstrap listener's name, as the load minted them (staticListenerNames). */
export function loadAllTls(bootstrap: JsonObject, listenerNames: readonly string[], read: (ds: JsonObject) => Buffer | undefined, errors: ConfigError[]): LoadedTls {
  const loaded: LoadedTls = { listeners: {}, clusters: {} };
  const resources = obj(bootstrap.static_resources);
  list(resources.listeners).forEach((l, li) => {
    const name = listenerNames[li]!;
    for (const [key, context] of Object.entries(loadListenerTls(l, `static_resources.listeners[${li}]`, read, errors))) loaded.listeners[listenerChainKey(name, key)] = context;
  });
  list(resources.clusters).forEach((c, i) => {
    const context = loadClusterTls(c, `static_resources.clusters[${i}]`, read, errors);
    if (context) loaded.clusters[String(c.name)] = context;
  });
  return loaded;
}

/** A cluster's TLS context, if its transport socket is TLS; `path` names the cluster in errors. */
export function loadClusterTls(c: JsonObject, path: string, read: (ds: JsonObject) => Buffer | undefined, errors: ConfigError[]): TlsContext | undefined {
  if (!c.transport_socket) return undefined;
  const tls = tlsContextConfig(c.transport_socket);
  if (!tls) {
    checkRawBuffer(c.transport_socket, `${path}.transport_socket`, 'an UpstreamTlsContext', errors);
    return undefined;
  }
  const tsPath = `${path}.transport_socket.typed_config`;
  if (tls.typeName !== UPSTREAM_TLS) {
    errors.push(configError('wrong_extension', tsPath, `a cluster's transport socket takes an UpstreamTlsContext, not ${tls.typeName}`));
    return undefined;
  }
  return loadTlsContext('upstream', `cluster ${String(c.name)}`, tls.config, tsPath, errors, read);
}
