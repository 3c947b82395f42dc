import type { TLSSocket } from 'node:tls';
import { stats } from '../../../stats/process.js';
import type { Counter } from '../../../stats/store.js';
import { presentAtZero } from '../../../stats/always-present.js';

/** Envoy's `ssl.*` figures of a listener (`listener.<address>.ssl.`) or a cluster (`cluster.<name>.ssl.`). */
export interface SslStats {
  handshake: Counter;
  connectionError: Counter;
  noCertificate: Counter;
  failVerifyNoCert: Counter;
  failVerifyError: Counter;
  failVerifySan: Counter;
  sessionReused: Counter;
  /** A client presented a certificate (a listener that asks for one). */
  clientCertificatePresented: Counter;
}

export function sslStats(prefix: string): SslStats {
  const p = `${prefix}ssl.`;
  presentAtZero('ssl', p);
  return {
    handshake: stats.counter(`${p}handshake`),
    connectionError: stats.counter(`${p}connection_error`),
    noCertificate: stats.counter(`${p}no_certificate`),
    failVerifyNoCert: stats.counter(`${p}fail_verify_no_cert`),
    failVerifyError: stats.counter(`${p}fail_verify_error`),
    failVerifySan: stats.counter(`${p}fail_verify_san`),
    sessionReused: stats.counter(`${p}session_reused`),
    clientCertificatePresented: stats.counter(`${p}client_certificate_presented`),
  };
}

/** OpenSSL's names for the groups BoringSSL (Envoy) calls otherwise. */
const CURVE_NAMES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

/**
 * After a handshake, as Envoy counts it: `ssl.versions.<version>`, `ssl.ciphers.<cipher>`, a
 * resumed session, and (on a connection this proxy opened: Node reports the key exchange only
 * to the client side) `ssl.curves.<curve>`.
 */
export function countHandshake(prefix: string, ssl: SslStats, socket: TLSSocket): void {
  ssl.handshake.inc();
  const version = socket.getProtocol();
  if (version) stats.counter(`${prefix}ssl.versions.${version}`).inc();
  const cipher = socket.getCipher()?.name;
  if (cipher) stats.counter(`${prefix}ssl.ciphers.${cipher}`).inc();
  if (socket.isSessionReused()) ssl.sessionReused.inc();
  const curve = (socket.getEphemeralKeyInfo() as { name?: unknown } | null)?.name;
  if (typeof curve === 'string') stats.counter(`${prefix}ssl.curves.${CURVE_NAMES[curve] ?? curve}`).inc();
}

/**
 * Envoy's socket-factory figures (`listener.<address>.server_ssl_socket_factory.`,
 * `cluster.<name>.client_ssl_socket_factory.`): a context built again because its SDS secrets came
 * or changed (counted by the supervisor, which builds it), and connections that found its secrets
 * not there yet (counted by the worker that refused them).
 */
export function sslFactoryStats(prefix: string, side: 'downstream' | 'upstream'): { updateBySds: Counter; secretsNotReady: Counter } {
  const p = `${prefix}${side === 'downstream' ? 'server' : 'client'}_ssl_socket_factory.`;
  return {
    updateBySds: stats.counter(`${p}ssl_context_update_by_sds`),
    secretsNotReady: stats.counter(`${p}${side === 'downstream' ? 'downstream' : 'upstream'}_context_secrets_not_ready`),
  };
}
