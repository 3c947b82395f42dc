import type { ConnectionOptions, PeerCertificate, TLSSocket } from 'node:tls';
import { tlsModule } from '../../../builtins.js';
import { secureContextOptions, tlsReady, type TlsContext } from './context.js';
import { publishCertificateExpiry } from './certificates.js';
import { compileSanMatchers } from './san.js';
import { countHandshake, sslFactoryStats, sslStats, type SslStats } from './ssl-stats.js';
import { SECRETS_NOT_READY_CODE } from '../../../upstream/transport-failure.js';

/** Envoy's transport failure reason for a connection whose context's SDS secrets have not come. */
export const SECRETS_NOT_READY = 'TLS error: Secret is not supplied by SDS';

/**
 * A cluster's UpstreamTlsContext, as node:tls options for every connection to its hosts (HTTP/1.1
 * pools, HTTP/2 sessions, TCP proxy, health checks). As in Envoy: the server's certificate is
 * verified only when `validation_context.trusted_ca` is set, against that CA and the SAN
 * matchers, never against the host name; SNI is sent only when `sni` is set; a client
 * certificate is presented when `tls_certificates` has one. ALPN offers `alpn_protocols`, or
 * the cluster's own protocol.
 */
export class UpstreamTls {
  /** The options every connection is made with (connectOptions adds a session to resume). */
  readonly options: ConnectionOptions;
  /** max_session_keys: how many sessions are kept to resume (0: none). */
  readonly maxSessions: number;
  /**
   * Sessions from this context's handshakes, newest first, as Envoy's client context keeps them
   * (for every host of the cluster; a server that does not know one does a full handshake).
   */
  private readonly sessions: { session: Buffer; singleUse: boolean }[] = [];
  readonly stats: SslStats;
  private readonly statPrefix: string;
  /** Counted when a connection finds the context's SDS secrets not there yet. */
  private readonly notReady: { secretsNotReady: { inc(): void } } | undefined;

  /** `protocol`: the cluster's, for ALPN when the context names none (`auto`: auto_config, h2 then http/1.1). */
  constructor(context: TlsContext, clusterName: string, protocol: boolean | 'auto') {
    const verifySan = compileSanMatchers(context.sanMatchers);
    this.maxSessions = context.maxSessionKeys ?? 1;
    this.statPrefix = `cluster.${clusterName}.`;
    this.stats = sslStats(this.statPrefix);
    const ready = tlsReady(context);
    this.notReady = ready ? undefined : sslFactoryStats(this.statPrefix, 'upstream');
    if (ready) publishCertificateExpiry(this.statPrefix, context);
    this.options = {
      secureContext: tlsModule().createSecureContext(ready ? secureContextOptions(context) : {}),
      ...(context.sni ? { servername: context.sni } : {}),
      rejectUnauthorized: context.ca !== undefined,
      // Called only after the chain verified: the SAN matchers, or nothing (Envoy does not check host names).
      checkServerIdentity: (_host: string, cert: PeerCertificate) => {
        if (!verifySan || verifySan(cert.subjectaltname)) return undefined;
        this.stats.failVerifySan.inc();
        return Object.assign(new Error(`the upstream's certificate matches no match_typed_subject_alt_names (${cert.subjectaltname ?? 'no SAN'})`), { code: 'ERR_TLS_SAN_MISMATCH' });
      },
      ALPNProtocols: context.alpn.length ? context.alpn : protocol === 'auto' ? ['h2', 'http/1.1'] : [protocol ? 'h2' : 'http/1.1'],
    };
  }

  /**
   * Every connection made with these options passes by here: while the context's SDS secrets have
   * not come, it is closed as soon as it is made, with Envoy's reason (the upstream sees a
   * connection that closes, the request a connection failure), and counted.
   */
  guard<T extends { destroy(err?: Error): void }>(connection: T): T {
    if (this.notReady) {
      this.notReady.secretsNotReady.inc();
      process.nextTick(() => connection.destroy(Object.assign(new Error(SECRETS_NOT_READY), { code: SECRETS_NOT_READY_CODE })));
    }
    if (this.maxSessions > 0 && connection instanceof tlsModule().TLSSocket) this.keepSessions(connection);
    return connection;
  }

  /**
   * The options for one new connection: these, with the newest session kept to resume. A TLS 1.3
   * session is used once (its ticket is single-use), as Envoy's client context does.
   */
  connectOptions(): ConnectionOptions {
    const kept = this.sessions[0];
    if (!kept) return this.options;
    if (kept.singleUse) this.sessions.shift();
    return { ...this.options, session: kept.session };
  }

  /** The sessions (TLS 1.2) and tickets (TLS 1.3) a connection's server gives, newest first, at most maxSessions. */
  private keepSessions(socket: TLSSocket): void {
    socket.on('session', (session: Buffer) => {
      this.sessions.unshift({ session, singleUse: socket.getProtocol() === 'TLSv1.3' });
      if (this.sessions.length > this.maxSessions) this.sessions.length = this.maxSessions;
    });
  }

  /** forServerName's variants, by name and what they do with it. */
  private variants: Map<string, UpstreamTls> | undefined;

  /**
   * This context for connections to `name` (auto_sni, auto_san_validation): naming it by SNI
   * (`sni`; never an IP address) and, with `verifySan`, accepting only a certificate with a SAN
   * for it, in place of the configured SAN matchers (Envoy's verify_subject_alt_name_list
   * override). The same secure context, figures and readiness.
   */
  forServerName(name: string, sni: boolean, verifySan: boolean): UpstreamTls {
    const key = `${sni ? 's' : ''}${verifySan ? 'v' : ''}|${name}`;
    const known = this.variants?.get(key);
    if (known) return known;
    const variant = Object.create(this) as UpstreamTls & { options: ConnectionOptions };
    const stats = this.stats;
    Object.defineProperty(variant, 'options', {
      value: {
        ...this.options,
        ...(sni ? { servername: name } : {}),
        ...(verifySan
          ? {
              checkServerIdentity: (_host: string, cert: PeerCertificate) => {
                if (sanNames(cert.subjectaltname).some((san) => nameMatches(san, name))) return undefined;
                stats.failVerifySan.inc();
                return Object.assign(new Error(`the upstream's certificate has no SAN for ${name} (${cert.subjectaltname ?? 'no SAN'})`), { code: 'ERR_TLS_SAN_MISMATCH' });
              },
            }
          : {}),
      },
    });
    (this.variants ??= new Map()).set(key, variant);
    return variant;
  }

  /** A connection attempt ended: a handshake (with its socket), or (for a TLS failure) a connection error. */
  outcome(err: (Error & { code?: string }) | null | undefined, socket?: TLSSocket): void {
    if (!err) {
      if (socket) countHandshake(this.statPrefix, this.stats, socket);
      else this.stats.handshake.inc();
    } else if (err.code !== SECRETS_NOT_READY_CODE && isTlsError(err)) {
      this.stats.connectionError.inc();
      if (/CERT|VERIFY|SELF_SIGNED|ISSUER/.test(err.code ?? '')) this.stats.failVerifyError.inc();
    }
  }
}

function isTlsError(err: Error & { code?: string }): boolean {
  const code = err.code ?? '';
  return code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT|VERIFY|SELF_SIGNED|ISSUER/.test(code) || /SSL|TLS/.test(err.message);
}

/** A certificate's DNS, IP and URI SANs, as Node lists them (`DNS:a.example, IP Address:10.0.0.1`). */
function sanNames(list: string | undefined): string[] {
  return (list ?? '').split(/,\s*/).map((entry) => entry.slice(entry.indexOf(':') + 1)).filter(Boolean);
}

/** Envoy's dnsNameMatch: equal ignoring case, or a `*.` SAN standing for exactly one label. */
function nameMatches(san: string, name: string): boolean {
  const a = san.toLowerCase();
  const b = name.toLowerCase();
  if (a === b) return true;
  if (!a.startsWith('*.')) return false;
  const dot = b.indexOf('.');
  return dot > 0 && b.slice(dot) === a.slice(1);
}
