import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A small PKI for TLS tests, made with the openssl command line in a temporary directory: a CA
 * and leaf certificates it signed (EC P-256), each with the SANs and serial asked for.
 */

export interface Leaf {
  cert: string;
  key: string;
  /** Paths of the PEM files. */
  certPath: string;
  keyPath: string;
  serial: string;
}

export interface TestPki {
  dir: string;
  ca: string;
  caPath: string;
  leaf(name: string, options: { sans: string[]; serial: string; days?: number; keyPassword?: string }): Leaf;
  /** Another CA, which signed nothing here (a client of it trusts no leaf). */
  otherCa(): { ca: string; caPath: string };
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string): string {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '30', '-subj', `/CN=${name}`, '-set_serial', '0x1000'], dir);
  return join(dir, `${name}.pem`);
}

export function makePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-pki-'));
  const caPath = makeCa(dir, 'test-ca');
  return {
    dir,
    ca: readFileSync(caPath, 'utf8'),
    caPath,
    leaf(name, { sans, serial, days = 10, keyPassword }) {
      openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`], dir);
      writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${sans.join(',')}\n`);
      openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'test-ca.pem', '-CAkey', 'test-ca.key', '-set_serial', `0x${serial}`, '-days', String(days), '-extfile', `${name}.ext`, '-out', `${name}.pem`], dir);
      let keyPath = join(dir, `${name}.key`);
      if (keyPassword !== undefined) {
        openssl(['pkey', '-in', `${name}.key`, '-aes256', '-passout', `pass:${keyPassword}`, '-out', `${name}.enc.key`], dir);
        keyPath = join(dir, `${name}.enc.key`);
      }
      const certPath = join(dir, `${name}.pem`);
      return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8'), certPath, keyPath, serial };
    },
    otherCa() {
      const path = makeCa(dir, 'other-ca');
      return { ca: readFileSync(path, 'utf8'), caPath: path };
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const DOWNSTREAM_TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
export const UPSTREAM_TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';

/** A `transport_socket` terminating TLS with `leaf`; `extra` goes into the DownstreamTlsContext. */
export function downstreamTls(leaf: Leaf, extra: { alpn?: string[]; context?: object; validation?: object } = {}): object {
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': DOWNSTREAM_TLS_TYPE,
      common_tls_context: {
        tls_certificates: [{ certificate_chain: { filename: leaf.certPath }, private_key: { filename: leaf.keyPath } }],
        ...(extra.alpn ? { alpn_protocols: extra.alpn } : {}),
        ...(extra.validation ? { validation_context: extra.validation } : {}),
      },
      ...extra.context,
    },
  };
}
