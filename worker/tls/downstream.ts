import { carryConnectionOrigin } from '../../shared/network/connection-origin.js';
import { carryConnectionId } from '../../shared/log/log-tags.js';
import type { Socket } from 'node:net';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import { tlsModule } from '../../shared/builtins.js';
import { secureContextOptions, tlsReady, type TlsContext } from '../../shared/extensions/transport-sockets/tls/context.js';
import { publishCertificateExpiry } from '../../shared/extensions/transport-sockets/tls/certificates.js';
import { compileSanMatchers } from '../../shared/extensions/transport-sockets/tls/san.js';
import { countHandshake, sslFactoryStats, sslStats, type SslStats } from '../../shared/extensions/transport-sockets/tls/ssl-stats.js';
import type { Counter } from '../../shared/stats/store.js';
import { resumptionOptions } from '../../shared/extensions/transport-sockets/tls/session-resumption.js';
import { keepSessions } from './session-cache.js';

/**
 * A filter chain's DownstreamTlsContext: terminates TLS on an accepted connection with the
 * chain's certificates, negotiates ALPN from `alpn_protocols`, and verifies client
 * certificates against `trusted_ca` (and the SAN matchers) when one is configured, counting
 * Envoy's `listener.<address>.ssl.*` figures.
 */
export class DownstreamTls {
  /** Node's TLS server as the handshake engine: it never listens; the listener hands it each connection. */
  private readonly server: TlsServer;
  private readonly verifySan: ((subjectAltName: string | undefined) => boolean) | undefined;
  private readonly stats: SslStats;
  /** While its SDS secrets have not come: connections are closed at once, counted here (Envoy's NotReadySslSocket). */
  private readonly notReady: Counter | undefined;

  constructor(
    private readonly context: TlsContext,
    private readonly statPrefix: string,
    /** Gets each connection once handshaken and verified. */
    ready: (socket: TLSSocket) => void,
  ) {
    this.verifySan = compileSanMatchers(context.sanMatchers);
    this.stats = sslStats(statPrefix);
    const secretsHere = tlsReady(context);
    this.notReady = secretsHere ? undefined : sslFactoryStats(statPrefix, 'downstream').secretsNotReady;
    if (secretsHere) publishCertificateExpiry(statPrefix, context);
    const verify = context.ca !== undefined;
    this.server = tlsModule().createServer({
      ...(secretsHere ? secureContextOptions(context) : {}),
      ...resumptionOptions(context.resumption, [...context.certificates.map((c) => c.chain.pem), context.ca?.pem ?? ''].join('\n')),
      ...(context.alpn.length ? { ALPNProtocols: context.alpn } : {}),
      // Verified here after the handshake, so that a missing certificate can be allowed and each failure counted.
      requestCert: verify,
      rejectUnauthorized: false,
    });
    if (context.resumption?.stateful) keepSessions(this.server, context.resumption.timeoutS);
    this.server.on('secureConnection', (socket: TLSSocket) => {
      if (verify && !this.verified(socket)) {
        socket.destroy();
        return;
      }
      countHandshake(this.statPrefix, this.stats, socket);
      // The addresses a PROXY header named are the TLS connection's too (Node keeps the raw socket as _parent).
      const raw = (socket as { _parent?: object | null })._parent;
      if (raw) {
        carryConnectionOrigin(raw, socket);
        carryConnectionId(raw, socket);
      }
      ready(socket);
    });
    this.server.on('tlsClientError', (_err: Error, socket: TLSSocket) => {
      this.stats.connectionError.inc();
      socket.destroy();
    });
  }

  /** Handshakes on `raw` (whose first bytes may have been read and put back). */
  accept(raw: Socket): void {
    if (this.notReady) {
      this.notReady.inc();
      raw.destroy();
      return;
    }
    this.server.emit('connection', raw);
  }

  private verified(socket: TLSSocket): boolean {
    const peer = socket.getPeerCertificate();
    if (!peer || Object.keys(peer).length === 0) {
      if (this.context.requireClientCertificate) {
        this.stats.failVerifyNoCert.inc();
        return false;
      }
      this.stats.noCertificate.inc();
      return true;
    }
    this.stats.clientCertificatePresented.inc();
    if (!socket.authorized) {
      this.stats.failVerifyError.inc();
      return false;
    }
    if (this.verifySan && !this.verifySan(peer.subjectaltname)) {
      this.stats.failVerifySan.inc();
      return false;
    }
    return true;
  }
}
