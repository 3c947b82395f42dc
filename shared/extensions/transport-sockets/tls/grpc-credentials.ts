import { createRequire } from 'node:module';
import type { TLSSocket } from 'node:tls';
import { tlsModule } from '../../../builtins.js';
import type { Socket } from 'node:net';
import type { CallCredentials, ChannelCredentials } from '@grpc/grpc-js';
import type { SecureConnector } from '@grpc/grpc-js/build/src/channel-credentials.js';
import type { UpstreamTls } from './upstream.js';

/** @grpc/grpc-js, loaded by loadGrpcJs. */
export type GrpcJs = typeof import('@grpc/grpc-js');

let loading: Promise<GrpcJs> | undefined;

declare const __PROXY_BUNDLE__: boolean | undefined;

/**
 * grpc-js on first use (13 MB of a process's memory, and its start): a worker loads it when it
 * first calls a gRPC service, the supervisor when its first xDS gRPC stream opens. In a role's
 * bundle, `require` is the launcher's, which loads grpc-js's own bundle (bin/role-launcher.cjs);
 * from sources (the tests), Node's require loads the package.
 */
export function loadGrpcJs(): Promise<GrpcJs> {
  return (loading ??= Promise.resolve().then(() => (typeof __PROXY_BUNDLE__ !== 'undefined' ? require('@grpc/grpc-js') : createRequire(import.meta.url)('@grpc/grpc-js')) as GrpcJs));
}

/**
 * The channel credentials of a gRPC client the proxy opens to a cluster's host (an xDS control
 * plane, an authorization or rate-limit service): plaintext when the cluster has no TLS transport
 * socket, else the cluster's own UpstreamTlsContext, applied exactly as to its HTTP connections.
 *
 * grpc-js's own TLS credentials always send SNI (the target's address when nothing else is set)
 * and verify the host name; Envoy sends SNI only when `sni` is set and verifies the certificate
 * against `trusted_ca` and the SAN matchers only. So the handshake is the cluster's: this
 * implements grpc-js's (public, abstract) ChannelCredentials with a connector that hands it the
 * socket after node:tls has made the connection with the cluster's options, and counts the
 * outcome in the cluster's `ssl.*` statistics.
 */
export function grpcCredentials(grpc: GrpcJs, tls: UpstreamTls | undefined): ChannelCredentials {
  return tls ? new (clusterTlsCredentials(grpc))(tls) : grpc.credentials.createInsecure();
}

const credentialClasses = new WeakMap<GrpcJs, new (tls: UpstreamTls) => ChannelCredentials>();

/** The class, made once grpc-js is loaded (it extends grpc-js's ChannelCredentials). */
function clusterTlsCredentials(grpc: GrpcJs): new (tls: UpstreamTls) => ChannelCredentials {
  const known = credentialClasses.get(grpc);
  if (known) return known;
  class ClusterTlsCredentials extends grpc.ChannelCredentials {
    constructor(private readonly tls: UpstreamTls) {
      super();
    }

    _isSecure(): boolean {
      return true;
    }

    _equals(other: ChannelCredentials): boolean {
      return other === this;
    }

    _createSecureConnector(_target: unknown, _options: unknown, callCredentials?: CallCredentials): SecureConnector {
      const tls = this.tls;
      const calls = callCredentials ?? grpc.CallCredentials.createEmpty();
      return {
        connect: (socket: Socket) =>
          new Promise((resolve, reject) => {
            const secured: TLSSocket = tlsModule().connect({ ...tls.options, socket }, () => {
              tls.outcome(null, secured);
              resolve({ socket: secured, secure: true });
            });
            secured.once('error', (err) => {
              tls.outcome(err);
              reject(err);
            });
          }),
        waitForReady: () => Promise.resolve(),
        getCallCredentials: () => calls,
        destroy: () => undefined,
      };
    }
  }
  credentialClasses.set(grpc, ClusterTlsCredentials);
  return ClusterTlsCredentials;
}
