/**
 * Why an upstream connection failed before it was established, in Envoy's words: the connection's
 * transport failure reason (`delayed connect error: Connection refused` for a refused TCP connect,
 * a `TLS_error:|…:TLS_error_end` line for a failed handshake), and the stream reset reason the
 * router names (`remote connection failure`, or `connection timeout` when connect_timeout passed).
 * %UPSTREAM_TRANSPORT_FAILURE_REASON% and the response code details print them with spaces as
 * underscores.
 */

/** strerror(3)'s text for the errors a connect(2) reports. */
const STRERROR: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'Connection refused',
  ECONNRESET: 'Connection reset by peer',
  EHOSTUNREACH: 'No route to host',
  ENETUNREACH: 'Network is unreachable',
  EADDRNOTAVAIL: 'Cannot assign requested address',
  ETIMEDOUT: 'Connection timed out',
  EPIPE: 'Broken pipe',
};

/** Node's certificate verification failures (X509_V_ERR_*): BoringSSL reports them all as CERTIFICATE_VERIFY_FAILED. */
const VERIFY_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_UNTRUSTED', 'CERT_REJECTED', 'CERT_SIGNATURE_FAILURE', 'ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH',
]);

export interface ConnectError extends Error {
  code?: string;
  /** OpenSSL's library and reason, on a TLS error. */
  library?: string;
  reason?: string;
}

/** A connection closed because its TLS context's SDS secrets have not come (its message is Envoy's reason). */
export const SECRETS_NOT_READY_CODE = 'ERR_SDS_SECRETS_NOT_READY';

/** The transport failure reason of a connection that never connected; undefined when there is none to give (a connect timeout). */
export function transportFailureReason(err: ConnectError, connectTimeoutCode: string): string | undefined {
  const code = err.code ?? '';
  if (code === connectTimeoutCode) return undefined;
  if (code === SECRETS_NOT_READY_CODE) return err.message;
  if (VERIFY_CODES.has(code)) return 'TLS_error:|SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED:TLS_error_end';
  if (err.library !== undefined || code.startsWith('ERR_SSL_')) {
    const reason = (err.reason ?? code.replace(/^ERR_SSL_/, '')).toUpperCase().replace(/[^A-Z0-9]+/g, '_');
    return `TLS_error:|${err.library ?? 'SSL routines'}:OPENSSL_internal:${reason}:TLS_error_end`;
  }
  const text = STRERROR[code];
  return text ? `delayed connect error: ${text}` : undefined;
}

/** The reset reason of a connect failure, as Envoy's router names it. */
export function connectResetReason(err: ConnectError, connectTimeoutCode: string): string {
  return err.code === connectTimeoutCode ? 'connection timeout' : 'remote connection failure';
}

/** Envoy's rendering of a reason in details and logs: every space an underscore. */
export function underscored(text: string): string {
  return text.replace(/ /g, '_');
}
