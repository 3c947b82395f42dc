import { checkConstraints } from './constraints.js';
import { checkAnyUses, type Extension } from '../extensions/registry.js';
import { lookupTypeOrNull, ProtoJsonReader, type AnyUse, type JsonObject, type UnknownFieldUse } from './proto-json.js';
import { envoySchema } from './schema.js';
import { checkCluster } from './semantic/clusters.js';
import { checkListener } from './semantic/listeners.js';
import { checkRouteConfig } from './semantic/routes.js';
import { checkSupportedFields } from './supported.js';
import { typeNameOfUrl } from './wkt.js';
import { configError, errorText, type ConfigError } from './config-error.js';

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
export const SECRET_TYPE = 'envoy.extensions.transport_sockets.tls.v3.Secret';

export type UnknownDynamicFields = 'reject' | 'warn' | 'ignore';

export interface CheckedResource {
  /** The resource's name, when it could be read. */
  name: string | undefined;
  /** The canonical resource, when it is valid. */
  message?: JsonObject;
  errors: ConfigError[];
  /** Unknown fields seen (allowed, unless rejected), e.g. `Cluster.foo`. */
  unknownFields: string[];
}

/**
 * A resource type of the discovery services, as grpc-js-xds's xds-resource-type/ keeps one: its
 * message, how messages name one of its resources, how a resource names itself, and its own rules
 * beyond its message's (what Envoy's manager checks when it takes the resource). Versions of a
 * resource compare by their hash (./resource-hash.ts), as Envoy's do.
 */
export interface XdsResourceType {
  readonly typeName: string;
  readonly typeUrl: string;
  /** In messages: `cluster 'a'`, `listener 'b'`. */
  readonly kind: string;
  /** The field that names a resource. */
  readonly nameField: 'name' | 'cluster_name';
  /** `clusters`: the names a route configuration with validate_clusters: true must name. */
  check(message: JsonObject, errors: ConfigError[], clusters: Set<string>): void;
}

const typeUrlOf = (typeName: string) => `type.googleapis.com/${typeName}`;

export const CLUSTERS: XdsResourceType = {
  typeName: CLUSTER_TYPE,
  typeUrl: typeUrlOf(CLUSTER_TYPE),
  kind: 'cluster',
  nameField: 'name',
  check: (message, errors) => checkCluster(message, '', errors),
};

export const ENDPOINTS: XdsResourceType = {
  typeName: ENDPOINTS_TYPE,
  typeUrl: typeUrlOf(ENDPOINTS_TYPE),
  kind: 'endpoints',
  nameField: 'cluster_name',
  // Endpoints follow a static load_assignment's rules (IP literals, weights).
  check: (message, errors) => checkCluster({ type: 'STATIC', load_assignment: message }, '', errors),
};

export const ROUTES: XdsResourceType = {
  typeName: ROUTE_TYPE,
  typeUrl: typeUrlOf(ROUTE_TYPE),
  kind: 'route configuration',
  nameField: 'name',
  // RDS tables default to validate_clusters: false (a static route_config to true), as in Envoy.
  check: (message, errors, clusters) => checkRouteConfig({ ...message, validate_clusters: message.validate_clusters === true }, '', clusters, errors),
};

export const LISTENERS: XdsResourceType = {
  typeName: LISTENER_TYPE,
  typeUrl: typeUrlOf(LISTENER_TYPE),
  kind: 'listener',
  nameField: 'name',
  check: (message, errors, clusters) => {
    checkListener(message, '', clusters, errors, true);
    if (message.name === undefined || message.name === '') errors.push(configError('missing', 'name', 'a listener from the listener discovery service needs a name'));
  },
};

export const SECRETS: XdsResourceType = {
  typeName: SECRET_TYPE,
  typeUrl: typeUrlOf(SECRET_TYPE),
  kind: 'secret',
  nameField: 'name',
  check: (message, errors) => {
    if (!['tls_certificate', 'validation_context', 'session_ticket_keys', 'generic_secret'].some((k) => message[k] !== undefined)) {
      errors.push(configError('missing', '', 'Secret type not implemented (set tls_certificate, validation_context, session_ticket_keys or generic_secret)'));
    }
  },
};

const RESOURCE_TYPES: ReadonlyMap<string, XdsResourceType> = new Map([CLUSTERS, ENDPOINTS, ROUTES, LISTENERS, SECRETS].map((t) => [t.typeName, t]));

/** The resource type of a message name (`envoy.config.cluster.v3.Cluster`), if the proxy subscribes to it. */
export function xdsResourceType(typeName: string): XdsResourceType | undefined {
  return RESOURCE_TYPES.get(typeName);
}

/**
 * What the binary decoder found in a resource of a gRPC response that its JSON cannot show
 * (malformed bytes, invalid UTF-8, unknown field numbers), with paths inside the resource.
 */
export interface BinaryFindings {
  errors: ConfigError[];
  unknownFields: UnknownFieldUse[];
}
const binaryFindings = new WeakMap<JsonObject, BinaryFindings>();

/** Notes what decoding `resource` from bytes found; decodeResource takes it into account. */
export function noteBinaryFindings(resource: JsonObject, findings: BinaryFindings): void {
  if (findings.errors.length || findings.unknownFields.length) binaryFindings.set(resource, findings);
}

/**
 * A resource as Envoy's resource decoder sees it (the Any converted and validated, its own
 * unknown fields checked, without descending into the Anys it holds). `responseErrors` fail the
 * whole response: Envoy's decoder throws, and the response changes nothing. `resourceErrors` are
 * the resource's alone (inside its typed configs, checked when their factories are built).
 */
interface DecodedResource {
  name: string | undefined;
  message: JsonObject | undefined;
  responseErrors: ConfigError[];
  resourceErrors: ConfigError[];
  unknownFields: UnknownFieldUse[];
  anys: AnyUse[];
}

/** Each resource object is decoded once per update, however many checks ask (the pre-pass, then its manager). */
const decoded = new WeakMap<JsonObject, { policy: UnknownDynamicFields; result: DecodedResource }>();

function insideAny(error: ConfigError, anys: AnyUse[]): boolean {
  return anys.some((a) => a.path !== '' && (error.path.startsWith(`${a.path}.`) || error.path.startsWith(`${a.path}[`)));
}

function decodeResource(typeName: string, any: JsonObject, unknownFields: UnknownDynamicFields): DecodedResource {
  const cached = decoded.get(any);
  if (cached && cached.policy === unknownFields) return cached.result;
  const { '@type': typeUrl, ...fields } = any;
  const named = fields[xdsResourceType(typeName)?.nameField ?? 'name'];
  const name = typeof named === 'string' ? named : undefined;
  const result: DecodedResource = { name, message: undefined, responseErrors: [], resourceErrors: [], unknownFields: [], anys: [] };
  if (typeof typeUrl !== 'string' || typeNameOfUrl(typeUrl) !== typeName) {
    // As Envoy's mux: a resource of another type than the response's fails the response.
    result.responseErrors.push(configError('invalid', '', `a resource of type ${typeof typeUrl === 'string' ? typeUrl : ''} where ${typeName} was expected`));
  } else {
    const root = envoySchema();
    const type = root.lookupType(typeName);
    const reader = new ProtoJsonReader(root, { unknownFields: unknownFields === 'reject' ? 'reject' : 'allow' });
    const message = reader.readMessage(type, fields, '');
    result.anys = reader.anys;
    const binary = binaryFindings.get(any);
    result.unknownFields = [...reader.unknownFields];
    const readErrors = [...(binary?.errors ?? []), ...reader.errors];
    for (const u of binary?.unknownFields ?? []) {
      if (unknownFields === 'reject') readErrors.push(configError('unknown_field', u.path, `unknown field in ${u.typeName}`));
      else result.unknownFields.push(u);
    }
    for (const e of readErrors) (insideAny(e, reader.anys) ? result.resourceErrors : result.responseErrors).push(e);
    if (readErrors.length === 0 && message) {
      checkConstraints(type, message, '', result.responseErrors, result.resourceErrors);
      result.message = message;
    }
  }
  decoded.set(any, { policy: unknownFields, result });
  return result;
}

/**
 * Why a resource of a JSON or YAML discovery response cannot be decoded at all (an unknown enum
 * value, a wrong type, a malformed duration, an unknown type URL), as opposed to decoding into
 * something invalid: Envoy's JSON loader fails on the whole file then (unknown fields aside,
 * which it retries without), so the update changes nothing. Empty when it decodes.
 */
export function decodeErrors(any: JsonObject): ConfigError[] {
  const { '@type': typeUrl, ...fields } = any;
  if (typeof typeUrl !== 'string') return [configError('missing', '', 'a resource without "@type"')];
  const root = envoySchema();
  const typeName = typeNameOfUrl(typeUrl);
  const type = lookupTypeOrNull(root, typeName);
  if (!type) return [configError('unsupported_extension', '', `unknown type URL '${typeUrl}'`)];
  const reader = new ProtoJsonReader(root, { unknownFields: 'allow' });
  reader.readMessage(type, fields, '');
  return reader.errors;
}

/**
 * The errors that refuse a whole discovery response of `typeName` (file or control plane), each
 * naming its resource and field: a resource of another type, one that cannot be read, one that
 * breaks its message's rules (Envoy's validation of the decoded resource), an unknown field with
 * --reject-unknown-dynamic-fields. Empty: the response goes on to its resources one by one.
 */
export function responseErrors(typeName: string, resources: JsonObject[], unknownFields: UnknownDynamicFields): string[] {
  const errors: string[] = [];
  for (const [i, any] of resources.entries()) {
    const d = decodeResource(typeName, any, unknownFields);
    if (d.responseErrors.length) errors.push(`${xdsResourceType(typeName)?.kind ?? 'resource'} '${d.name ?? `resources[${i}]`}': ${errorText(d.responseErrors)}`);
  }
  return errors;
}

/**
 * `clusters`: the names a route configuration with validate_clusters: true must name (RDS
 * defaults to false; a listener's inline route_config to true).
 */
export function checkResource(typeName: string, any: JsonObject, unknownFields: UnknownDynamicFields, disabled: Set<Extension>, clusters?: Set<string>): CheckedResource {
  const d = decodeResource(typeName, any, unknownFields);
  const errors = [...d.responseErrors, ...d.resourceErrors];
  const message = d.message;
  if (errors.length === 0 && message) {
    const type = envoySchema().lookupType(typeName);
    checkSupportedFields(type, message, '', errors);
    checkAnyUses(d.anys, disabled, errors);
    xdsResourceType(typeName)?.check(message, errors, clusters ?? new Set());
  }
  const unknown = unknownFields === 'ignore' ? [] : d.unknownFields.map((u) => `${u.typeName}.${u.field}`);
  return errors.length || !message ? { name: d.name, errors, unknownFields: unknown } : { name: d.name, message, errors: [], unknownFields: unknown };
}
