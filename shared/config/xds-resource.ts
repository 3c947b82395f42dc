import { checkConstraints } from './constraints.js';
import { checkAnyUses, type Extension } from './extensions.js';
import { lookupTypeOrNull, ProtoJsonReader, type JsonObject } from './proto-json.js';
import { envoySchema } from './schema.js';
import { checkCluster, checkListener, checkRouteConfig } from './semantic.js';
import { checkSupportedFields } from './supported.js';
import { typeNameOfUrl } from './wkt.js';

/**
 * One resource from a discovery response (a file or a control plane), validated alone as the
 * bootstrap is — schema, Envoy's constraints, the fields this proxy implements, extensions, the
 * resource's own semantics — so that one bad resource is rejected by name while its siblings
 * apply. Unknown fields follow --reject-unknown-dynamic-fields / --ignore-unknown-dynamic-fields.
 */

export const CLUSTER_TYPE = 'envoy.config.cluster.v3.Cluster';
export const ENDPOINTS_TYPE = 'envoy.config.endpoint.v3.ClusterLoadAssignment';
export const ROUTE_TYPE = 'envoy.config.route.v3.RouteConfiguration';
export const LISTENER_TYPE = 'envoy.config.listener.v3.Listener';

export type UnknownDynamicFields = 'reject' | 'warn' | 'ignore';

export interface CheckedResource {
  /** The resource's name, when it could be read. */
  name: string | undefined;
  /** The canonical resource, when it is valid. */
  message?: JsonObject;
  errors: string[];
  /** Unknown fields seen (allowed, unless rejected), e.g. `Cluster.foo`. */
  unknownFields: string[];
}

/**
 * Why a resource of a JSON or YAML discovery response cannot be decoded at all (an unknown enum
 * value, a wrong type, a malformed duration, an unknown type URL), as opposed to decoding into
 * something invalid: Envoy's JSON loader fails on the whole file then (unknown fields aside,
 * which it retries without), so the update changes nothing. Empty when it decodes.
 */
export function decodeErrors(any: JsonObject): string[] {
  const { '@type': typeUrl, ...fields } = any;
  if (typeof typeUrl !== 'string') return ['a resource without "@type"'];
  const root = envoySchema();
  const typeName = typeNameOfUrl(typeUrl);
  const type = lookupTypeOrNull(root, typeName);
  if (!type) return [`unknown type URL '${typeUrl}'`];
  const reader = new ProtoJsonReader(root, { unknownFields: 'allow' });
  reader.readMessage(type, fields, '');
  return reader.errors.map((e) => e.replace(/^\./, ''));
}

/**
 * `clusters`: the names a route configuration with validate_clusters: true must name (RDS
 * defaults to false; a listener's inline route_config to true).
 */
export function checkResource(typeName: string, any: JsonObject, unknownFields: UnknownDynamicFields, disabled: Set<Extension>, clusters?: Set<string>): CheckedResource {
  const { '@type': typeUrl, ...fields } = any;
  const name = typeof fields.name === 'string' ? fields.name : typeof fields.cluster_name === 'string' ? fields.cluster_name : undefined;
  if (typeof typeUrl !== 'string' || typeNameOfUrl(typeUrl) !== typeName) {
    return { name, errors: [`a resource of type ${String(typeUrl)} where ${typeName} was expected`], unknownFields: [] };
  }
  const root = envoySchema();
  const type = root.lookupType(typeName);
  const reader = new ProtoJsonReader(root, { unknownFields: unknownFields === 'reject' ? 'reject' : 'allow' });
  const message = reader.readMessage(type, fields, '') ?? {};
  const errors = [...reader.errors];
  if (errors.length === 0) {
    checkConstraints(type, message, '', errors);
    checkSupportedFields(type, message, '', errors);
    checkAnyUses(reader.anys, disabled, errors);
    // Endpoints follow a static load_assignment's rules (IP literals, weights).
    if (typeName === ENDPOINTS_TYPE) checkCluster({ type: 'STATIC', load_assignment: message }, '', errors);
    // RDS tables default to validate_clusters: false (a static route_config to true), as in Envoy.
    if (typeName === ROUTE_TYPE) checkRouteConfig({ ...message, validate_clusters: message.validate_clusters === true }, '', clusters ?? new Set(), errors);
    if (typeName === LISTENER_TYPE) {
      checkListener(message, '', clusters ?? new Set(), errors, true);
      if (message.name === undefined || message.name === '') errors.push('name: a listener from the listener discovery service needs a name');
    }
    if (typeName === CLUSTER_TYPE) checkCluster(message, '', errors);
  }
  const unknown = unknownFields === 'ignore' ? [] : reader.unknownFields.map((u) => `${u.typeName}.${u.field}`);
  return errors.length ? { name, errors: errors.map((e) => e.replace(/^\./, '')), unknownFields: unknown } : { name, message, errors: [], unknownFields: unknown };
}
