import { obj } from '../../config/access.js';
import type { JsonObject } from '../../config/proto-json.js';
import { typeNameOfUrl } from '../../config/wkt.js';
import type { RetryHostPredicate, RetryPriority } from '../../http/retry-plugins.js';
import type { RetryHostPredicateDescriptor, RetryPriorityDescriptor } from '../descriptor.js';
import * as hostFolders from './host/index.js';
import * as priorityFolders from './priority/index.js';

/**
 * The retry plugins of a route's retry_policy, by their typed_config's type: for the route
 * table, which compiles a policy without loading the whole registry (../registry.ts lists these
 * with every extension; the loader has refused any other type).
 */

const hostPredicates = new Map(Object.values(hostFolders).flat().map((d: RetryHostPredicateDescriptor) => [d.typeName, d]));
const priorities = new Map(Object.values(priorityFolders).flat().map((d: RetryPriorityDescriptor) => [d.typeName, d]));

const typeOf = (extension: JsonObject) => typeNameOfUrl(String(obj(extension.typed_config)['@type'] ?? ''));

/** A retry_host_predicate entry: a maker of one request's predicate. */
export function retryHostPredicate(extension: JsonObject): (() => RetryHostPredicate) | undefined {
  return hostPredicates.get(typeOf(extension))?.create(obj(extension.typed_config));
}

/** A retry_priority: a maker of one request's priority. */
export function retryPriority(extension: JsonObject): (() => RetryPriority) | undefined {
  return priorities.get(typeOf(extension))?.create(obj(extension.typed_config));
}

export const RETRY_EXTENSIONS = [...hostPredicates.values(), ...priorities.values()];
