import { cryptoModule } from '../../../builtins.js';
import { stats } from '../../../stats/process.js';
import { tlsReady, type LoadedTls, type PemSource, type TlsContext } from './context.js';
import { sanEntries } from './san.js';

/**
 * What /certs says of a certificate (envoy.admin.v3.CertificateDetails) and the
 * `server.days_until_first_cert_expiring` figure, from the PEM the contexts were loaded with.
 */

export type SubjectAltName = { dns: string } | { uri: string } | { ip_address: string };

export interface CertificateDetails {
  path: string;
  serial_number: string;
  subject_alt_names: SubjectAltName[];
  days_until_expiration: string;
  valid_from: string;
  expiration_time: string;
}

const DAY_MS = 86_400_000;

/** RFC 3339 without fractions, as Envoy prints a Timestamp with whole seconds. */
function rfc3339(text: string): string {
  return new Date(text).toISOString().replace('.000Z', 'Z');
}

/** Envoy lists DNS, URI and IP SANs (not e-mail or others). */
export function subjectAltNames(text: string | undefined): SubjectAltName[] {
  const out: SubjectAltName[] = [];
  for (const [kind, value] of sanEntries(text)) {
    if (kind === 'DNS') out.push({ dns: value });
    else if (kind === 'URI') out.push({ uri: value });
    else if (kind === 'IP Address') out.push({ ip_address: value });
  }
  return out;
}


export function certificateDetails(source: PemSource, nowMs: number): CertificateDetails {
  const cert = new (cryptoModule().X509Certificate)(source.pem);
  return {
    path: source.path,
    serial_number: cert.serialNumber.toLowerCase(),
    subject_alt_names: subjectAltNames(cert.subjectAltName),
    days_until_expiration: String(daysUntil(new Date(cert.validTo).getTime(), nowMs)),
    valid_from: rfc3339(cert.validFrom),
    expiration_time: rfc3339(cert.validTo),
  };
}

/** The contexts that exist as Envoy's do: one whose SDS secrets have not come is not made (nor listed). */
function contexts(tls: LoadedTls): TlsContext[] {
  return [...Object.values(tls.listeners), ...Object.values(tls.clusters)].filter(tlsReady);
}

/** envoy.admin.v3.Certificates: one entry per context, its CA and its certificates. */
export function certificatesJson(tls: LoadedTls, nowMs: number): { certificates: { ca_cert: CertificateDetails[]; cert_chain: CertificateDetails[] }[] } {
  return {
    certificates: contexts(tls).map((c) => ({
      ca_cert: c.ca ? [certificateDetails(c.ca, nowMs)] : [],
      cert_chain: c.certificates.map((x) => certificateDetails(x.chain, nowMs)),
    })),
  };
}

/** When the first loaded certificate (or CA) expires, in ms since the epoch; undefined without any. */
export function firstCertExpiry(tls: LoadedTls): number | undefined {
  let first: number | undefined;
  for (const c of contexts(tls)) {
    for (const source of [...c.certificates.map((x) => x.chain), ...(c.ca ? [c.ca] : [])]) {
      const expiry = new Date(new (cryptoModule().X509Certificate)(source.pem).validTo).getTime();
      first = first === undefined ? expiry : Math.min(first, expiry);
    }
  }
  return first;
}

/**
 * A certificate's name in Envoy's statistics: the secret's name when a secret gave it, else
 * `unnamed_cert_` (`unnamed_ca_cert_` for a CA) and the first 8 hex digits of the SHA-256 of the
 * certificate given inline; a file's certificate has no inline bytes, so its digest is that of
 * nothing (`e3b0c442`), as running Envoys name them.
 */
export function certificateStatName(source: PemSource, ca: boolean): string {
  if (source.secretName !== undefined) return source.secretName;
  const digest = cryptoModule().createHash('sha256').update(source.inline ? source.pem : '').digest('hex').slice(0, 8);
  return `${ca ? 'unnamed_ca_cert_' : 'unnamed_cert_'}${digest}`;
}

/**
 * Envoy's `<prefix>ssl.certificate.<name>.expiration_unix_time_seconds` gauges of a TLS context
 * (a listener's or a cluster's): when each of its certificates and its CA expire. Every process
 * that loads the context reports the same value, so the admin does not add them up.
 */
export function publishCertificateExpiry(prefix: string, context: TlsContext): void {
  const publish = (source: PemSource, ca: boolean) => {
    const seconds = Math.floor(new Date(new (cryptoModule().X509Certificate)(source.pem).validTo).getTime() / 1000);
    stats.gauge(`${prefix}ssl.certificate.${certificateStatName(source, ca)}.expiration_unix_time_seconds`, 'local').set(seconds);
  };
  for (const c of context.certificates) publish(c.chain, false);
  if (context.ca) publish(context.ca, true);
}

/** Whole days left until `expiryMs` (0 once past), as Envoy counts them. */
export function daysUntil(expiryMs: number, nowMs: number): number {
  return Math.max(0, Math.floor((expiryMs - nowMs) / DAY_MS));
}
