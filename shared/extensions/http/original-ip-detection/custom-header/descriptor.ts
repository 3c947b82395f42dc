import { obj } from '../../../../config/access.js';
import { httpStatusCode } from '../../../../config/wkt.js';
import { parseIp, type OriginalIpDetection } from '../../../../http/original-ip.js';
import type { OriginalIpDetectionDescriptor } from '../../../descriptor.js';

const CUSTOM_HEADER = 'envoy.extensions.http.original_ip_detection.custom_header.v3.CustomHeaderConfig';

/**
 * The client's address from a header of the operator's choice (its first value), as Envoy's
 * CustomHeaderIPDetection: trusted for internal_address_config only with
 * allow_extension_to_set_address_as_trusted; with reject_with_status, a request without a usable
 * address is answered with that status (403 for one outside 400–511).
 */
export const extensions: readonly OriginalIpDetectionDescriptor[] = [
  {
    name: 'envoy.http.original_ip_detection.custom_header',
    category: 'envoy.http.original_ip_detection',
    typeName: CUSTOM_HEADER,
    description: "the client's address from a header named in the configuration, optionally refusing requests without one",
    deprecatedNames: [],
    create(config): OriginalIpDetection {
      const header = String(config.header_name ?? '').toLowerCase();
      const trusted = config.allow_extension_to_set_address_as_trusted === true;
      const code = config.reject_with_status !== undefined ? httpStatusCode(obj(config.reject_with_status).code) : undefined;
      const rejectStatus = code === undefined ? undefined : code < 400 || code > 511 ? 403 : code;
      const failed = rejectStatus === undefined ? { trusted: false } : { trusted: false, rejectStatus };
      return {
        detect: (headers, _peer, raw) => {
          const value = headers[header];
          let first = Array.isArray(value) ? value[0] : value;
          // Node joins a header sent twice with ", "; Envoy reads the first of them.
          if (first?.includes(',') && raw) first = firstRawValue(raw, header) ?? first;
          const ip = first === undefined ? undefined : parseIp(first);
          return ip === undefined ? failed : { ip, trusted };
        },
      };
    },
  },
];

/** The first value of header `name` (lower case) in a raw [name, value, …] list. */
function firstRawValue(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) return raw[i + 1];
  return undefined;
}
