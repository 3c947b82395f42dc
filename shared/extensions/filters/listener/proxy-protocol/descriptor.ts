import type { ListenerFilterDescriptor } from '../../../descriptor.js';
import { PROXY_PROTOCOL, proxyProtocol, validateProxyProtocol } from './proxy-protocol.js';

const TYPE = 'envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol';

export const extensions: readonly ListenerFilterDescriptor[] = [
  {
    name: PROXY_PROTOCOL,
    category: 'envoy.filters.listener',
    typeName: TYPE,
    description: 'reads a PROXY protocol header (v1, v2 and its TLVs): the connection takes the addresses it names',
    deprecatedNames: ['envoy.listener.proxy_protocol'],
    fields: {
      [TYPE]: ['rules', 'allow_requests_without_proxy_protocol', 'pass_through_tlvs', 'disallowed_versions', 'stat_prefix', 'tlv_location'],
      [`${TYPE}.Rule`]: ['tlv_type', 'on_tlv_present'],
      [`${TYPE}.KeyValuePair`]: ['metadata_namespace', 'key'],
      'envoy.config.core.v3.ProxyProtocolPassThroughTLVs': ['match_type', 'tlv_type'],
    },
    validate: validateProxyProtocol,
    create: proxyProtocol,
  },
];
