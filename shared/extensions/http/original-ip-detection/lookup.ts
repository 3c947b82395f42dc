import { list, obj } from '../../../config/access.js';
import { configError, type ConfigError } from '../../../config/config-error.js';
import type { JsonObject } from '../../../config/proto-json.js';
import { typeNameOfUrl } from '../../../config/wkt.js';
import type { OriginalIpDetection } from '../../../http/original-ip.js';
import type { OriginalIpDetectionDescriptor } from '../../descriptor.js';
import * as detectionFolders from './index.js';
import { xffDetection } from './xff/descriptor.js';

/**
 * A connection manager's original IP detection, as Envoy's HttpConnectionManagerConfig builds it:
 * its original_ip_detection_extensions, or else the x-forwarded-for one with xff_num_trusted_hops.
 * For the workers, which build it without loading the whole registry (../../registry.ts lists
 * these with every extension).
 */

/** The connection manager's fields these read (from its typed configuration or the loader's JSON). */
type DetectionFields = { use_remote_address?: unknown; xff_num_trusted_hops?: unknown; original_ip_detection_extensions?: unknown };

const detections = new Map(Object.values(detectionFolders).flat().map((d: OriginalIpDetectionDescriptor) => [d.typeName, d]));

function configured(hcm: DetectionFields): { name: string; config: JsonObject; descriptor: OriginalIpDetectionDescriptor | undefined }[] {
  return list(hcm.original_ip_detection_extensions).map((e) => {
    const config = obj(e.typed_config);
    return { name: String(e.name ?? ''), config, descriptor: detections.get(typeNameOfUrl(String(config['@type'] ?? ''))) };
  });
}

function trustedHops(hcm: DetectionFields): number {
  return typeof hcm.xff_num_trusted_hops === 'number' ? hcm.xff_num_trusted_hops : 0;
}

/** The detections to run in order when use_remote_address is false. */
export function originalIpDetections(hcm: DetectionFields): OriginalIpDetection[] {
  const extensions = configured(hcm);
  if (!extensions.length) return [xffDetection({ xff_num_trusted_hops: trustedHops(hcm) })];
  return extensions.flatMap((e) => (e.descriptor ? [e.descriptor.create(e.config)] : []));
}

/** The configuration's checks, with Envoy's words (an unknown type is refused with every typed_config). */
export function checkOriginalIpDetection(hcm: DetectionFields, path: string, errors: ConfigError[]): void {
  const extensions = configured(hcm);
  if (!extensions.length) return;
  const at = `${path}.original_ip_detection_extensions`;
  if (hcm.use_remote_address === true) errors.push(configError('conflict', at, 'Original IP detection extensions and use_remote_address may not be mixed'));
  if (trustedHops(hcm) > 0) errors.push(configError('conflict', at, 'Original IP detection extensions and xff_num_trusted_hops may not be mixed'));
  extensions.forEach((e, i) => {
    if (!e.descriptor) errors.push(configError('unsupported_extension', `${at}[${i}]`, `Original IP detection extension not found: '${e.name}'`));
    else e.descriptor.validate?.(e.config, `${at}[${i}].typed_config`, errors);
  });
}
