import { stats } from '../stats/process.js';
import type { Counter } from '../stats/store.js';

/** Envoy's `ssl.*` figures of a listener (`listener.<address>.ssl.`) or a cluster (`cluster.<name>.ssl.`). */
export interface SslStats {
  handshake: Counter;
  connectionError: Counter;
  noCertificate: Counter;
  failVerifyNoCert: Counter;
  failVerifyError: Counter;
  failVerifySan: Counter;
}

export function sslStats(prefix: string): SslStats {
  const p = `${prefix}ssl.`;
  return {
    handshake: stats.counter(`${p}handshake`),
    connectionError: stats.counter(`${p}connection_error`),
    noCertificate: stats.counter(`${p}no_certificate`),
    failVerifyNoCert: stats.counter(`${p}fail_verify_no_cert`),
    failVerifyError: stats.counter(`${p}fail_verify_error`),
    failVerifySan: stats.counter(`${p}fail_verify_san`),
  };
}
