import type { JsonObject } from '../../shared/config/proto-json.js';
import { responseErrors, type UnknownDynamicFields } from '../../shared/config/xds-resource.js';

/**
 * A discovery response refused as a whole, as Envoy refuses one whose resources its decoder
 * cannot convert and validate: nothing of it is applied, the subscription counts it as
 * `update_rejected`, a control plane gets a NACK whose error_detail names each resource and field.
 * Thrown by the subscribers' apply (see screened()) and caught by the subscription that read it.
 */
export class ResponseRefused extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join('; '));
    this.name = 'ResponseRefused';
  }
}

/**
 * `apply`, refusing first (throwing ResponseRefused) a response of `typeName` that Envoy's
 * decoder would refuse whole; a response that passes goes to `apply`, resource by resource.
 */
export function screened<A extends unknown[], R>(typeName: string, unknownFields: UnknownDynamicFields, apply: (versionInfo: string, resources: JsonObject[], ...rest: A) => R) {
  return (versionInfo: string, resources: JsonObject[], ...rest: A): R => {
    const refused = responseErrors(typeName, resources, unknownFields);
    if (refused.length) throw new ResponseRefused(refused);
    return apply(versionInfo, resources, ...rest);
  };
}
