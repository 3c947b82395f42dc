import type { TransportSocketDescriptor } from '../../descriptor.js';
import { DOWNSTREAM_TLS, UPSTREAM_TLS } from './context.js';

const TLS = 'envoy.extensions.transport_sockets.tls.v3';

/** The messages a TLS context is made of, and the fields of them this proxy implements (both sides). */
const COMMON: Readonly<Record<string, readonly string[]>> = {
  [`${TLS}.CommonTlsContext`]: ['tls_certificates', 'tls_certificate_sds_secret_configs', 'validation_context', 'validation_context_sds_secret_config', 'combined_validation_context', 'alpn_protocols', 'tls_params'],
  [`${TLS}.CommonTlsContext.CombinedCertificateValidationContext`]: ['default_validation_context', 'validation_context_sds_secret_config'],
  [`${TLS}.SdsSecretConfig`]: ['name', 'sds_config'],
  [`${TLS}.TlsCertificate`]: ['certificate_chain', 'private_key', 'password', 'watched_directory'],
  [`${TLS}.CertificateValidationContext`]: ['trusted_ca', 'match_typed_subject_alt_names', 'match_subject_alt_names', 'watched_directory'],
  // The bootstrap's static_resources.secrets and SDS's resources (./secrets.ts).
  [`${TLS}.Secret`]: ['name', 'tls_certificate', 'validation_context', 'session_ticket_keys', 'generic_secret'],
  [`${TLS}.GenericSecret`]: ['secret', 'secrets'],
  [`${TLS}.TlsSessionTicketKeys`]: ['keys'],
  [`${TLS}.SubjectAltNameMatcher`]: ['san_type', 'matcher'],
  [`${TLS}.TlsParameters`]: ['tls_minimum_protocol_version', 'tls_maximum_protocol_version', 'cipher_suites', 'ecdh_curves'],
};
const REFUSED: Readonly<Record<string, string>> = {
  [`${TLS}.TlsCertificate.private_key_provider`]: 'private key providers are not supported; give private_key',
};

/**
 * TLS, on a listener's filter chain and to a cluster's hosts. The supervisor loads each context
 * with its certificates (./context.ts); workers terminate TLS with it (worker/tls/) and originate
 * it (./upstream.ts).
 */
export const extensions: readonly TransportSocketDescriptor[] = [
  {
    name: 'envoy.transport_sockets.tls',
    category: 'envoy.transport_sockets.downstream',
    typeName: DOWNSTREAM_TLS,
    description: 'TLS on listeners: certificates by SNI, client certificates',
    deprecatedNames: ['tls'],
    tls: true,
    fields: {
      [DOWNSTREAM_TLS]: ['common_tls_context', 'require_client_certificate', 'session_ticket_keys', 'session_ticket_keys_sds_secret_config', 'disable_stateless_session_resumption', 'disable_stateful_session_resumption', 'session_timeout'],
      ...COMMON,
    },
    refusalReasons: REFUSED,
  },
  {
    name: 'envoy.transport_sockets.tls',
    category: 'envoy.transport_sockets.upstream',
    typeName: UPSTREAM_TLS,
    description: 'TLS to upstream hosts: SNI, CA and SAN verification, client certificates',
    deprecatedNames: ['tls'],
    tls: true,
    fields: { [UPSTREAM_TLS]: ['common_tls_context', 'sni', 'max_session_keys'], ...COMMON },
    refusalReasons: REFUSED,
  },
];
