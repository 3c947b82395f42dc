import type { TransportSocketDescriptor } from '../../descriptor.js';
import { DOWNSTREAM_TLS, UPSTREAM_TLS } from './context.js';

const TLS = 'envoy.extensions.transport_sockets.tls.v3';
const NO_SDS = 'SDS is not supported';

/** The messages a TLS context is made of, and the fields of them this proxy implements (both sides). */
const COMMON: Readonly<Record<string, readonly string[]>> = {
  [`${TLS}.CommonTlsContext`]: ['tls_certificates', 'validation_context', 'alpn_protocols', 'tls_params'],
  [`${TLS}.TlsCertificate`]: ['certificate_chain', 'private_key', 'password'],
  [`${TLS}.CertificateValidationContext`]: ['trusted_ca', 'match_typed_subject_alt_names', 'match_subject_alt_names'],
  [`${TLS}.SubjectAltNameMatcher`]: ['san_type', 'matcher'],
  [`${TLS}.TlsParameters`]: ['tls_minimum_protocol_version', 'tls_maximum_protocol_version', 'cipher_suites', 'ecdh_curves'],
};
const REFUSED: Readonly<Record<string, string>> = {
  [`${TLS}.CommonTlsContext.tls_certificate_sds_secret_configs`]: `${NO_SDS}; give tls_certificates as files or inline`,
  [`${TLS}.CommonTlsContext.validation_context_sds_secret_config`]: `${NO_SDS}; give validation_context as files or inline`,
  [`${TLS}.CommonTlsContext.combined_validation_context`]: `${NO_SDS}; use validation_context`,
  [`${TLS}.TlsCertificate.private_key_provider`]: 'private key providers are not supported; give private_key',
  [`${TLS}.DownstreamTlsContext.session_ticket_keys_sds_secret_config`]: `${NO_SDS}; give session_ticket_keys`,
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
      [DOWNSTREAM_TLS]: ['common_tls_context', 'require_client_certificate', 'session_ticket_keys', 'disable_stateless_session_resumption', 'disable_stateful_session_resumption', 'session_timeout'],
      [`${TLS}.TlsSessionTicketKeys`]: ['keys'],
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
    fields: { [UPSTREAM_TLS]: ['common_tls_context', 'sni'], ...COMMON },
    refusalReasons: REFUSED,
  },
];
