import { list, obj } from '../../../../config/access.js';
import { compileCidrRange } from '../../../../address.js';
import { configError } from '../../../../config/config-error.js';
import { lastAddressFromXff, lastUntrustedFromXff, type OriginalIpDetection } from '../../../../http/original-ip.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import type { OriginalIpDetectionDescriptor } from '../../../descriptor.js';

const XFF = 'envoy.extensions.http.original_ip_detection.xff.v3.XffConfig';

/**
 * The client's address from x-forwarded-for, as Envoy's XffIPDetection: the entry
 * xff_num_trusted_hops from its end; or, with xff_trusted_cidrs and a peer in them, the last entry
 * not in them. skip_xff_append false appends the peer to x-forwarded-for.
 */
export function xffDetection(config: JsonObject): OriginalIpDetection {
  const hops = typeof config.xff_num_trusted_hops === 'number' ? config.xff_num_trusted_hops : 0;
  const appendXff = config.skip_xff_append === false;
  const cidrs = list(obj(config.xff_trusted_cidrs).cidrs).map(compileCidrRange);
  if (cidrs.length) {
    const trusted = (ip: string) => cidrs.some((c) => c(ip));
    return {
      detect: (headers, peer) => {
        if (peer === undefined || !trusted(peer)) return { trusted: false };
        const r = lastUntrustedFromXff(headers['x-forwarded-for'], trusted);
        return { ...(r.ip !== undefined ? { ip: r.ip } : {}), trusted: r.single, appendXff };
      },
    };
  }
  return {
    detect: (headers) => {
      const r = lastAddressFromXff(headers['x-forwarded-for'], hops);
      return { ...(r.ip !== undefined ? { ip: r.ip } : {}), trusted: r.single, appendXff };
    },
  };
}

export const extensions: readonly OriginalIpDetectionDescriptor[] = [
  {
    name: 'envoy.http.original_ip_detection.xff',
    category: 'envoy.http.original_ip_detection',
    typeName: XFF,
    description: "the client's address from x-forwarded-for: trusted hops from its end, or past trusted CIDRs",
    deprecatedNames: [],
    validate(config, path, errors) {
      if (config.xff_trusted_cidrs !== undefined && typeof config.xff_num_trusted_hops === 'number' && config.xff_num_trusted_hops > 0) {
        errors.push(configError('conflict', path, 'Cannot set both xff_num_trusted_hops and xff_trusted_cidrs'));
      }
    },
    create: xffDetection,
  },
];
