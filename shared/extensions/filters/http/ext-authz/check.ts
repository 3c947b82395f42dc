import { list, obj } from '../../../../config/access.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import { compileStringMatcher } from '../../../../matchers.js';
import type { FilterRequest } from '../../../../http/filter-api.js';

/**
 * What an authorization check is given and what it decides, whichever service answers it (an
 * HTTP service: ./http-service.ts; gRPC Authorization: ./grpc-service.ts).
 */

export interface CheckInput {
  request: FilterRequest;
  /** The request body, when with_request_body read it. */
  body: Buffer | undefined;
  /** The route's context_extensions (gRPC only). */
  contextExtensions: Record<string, string>;
  /** The namespaces of dynamic metadata to send (metadata_context_namespaces, gRPC only). */
  metadataContext: Record<string, Record<string, unknown>>;
  /** A monotonically increasing id for the request (Envoy sends its stream id). */
  id: string;
  startedAtMs: number;
}

export type HeaderPair = [name: string, value: string];

/** A header for the client's response: added, or set, as `append` says. */
export interface ResponseHeader {
  name: string;
  value: string;
  /** APPEND_IF_EXISTS_OR_ADD (another value), ADD_IF_ABSENT, OVERWRITE_IF_EXISTS_OR_ADD, OVERWRITE_IF_EXISTS. */
  action: string;
}

export type AuthzDecision =
  | {
      kind: 'ok';
      /** Set on the upstream request (replacing). */
      set: HeaderPair[];
      /** Added to the upstream request (another value, or the header). */
      append: HeaderPair[];
      /** Appended only to a header the request already has. */
      appendIfPresent: HeaderPair[];
      remove: string[];
      /** For the client's response. */
      responseHeaders: ResponseHeader[];
      setQuery: HeaderPair[];
      removeQuery: string[];
      /** Dynamic metadata for the namespace envoy.filters.http.ext_authz. */
      metadata?: Record<string, unknown>;
    }
  | { kind: 'denied'; status: number; headers: HeaderPair[]; body: string; metadata?: Record<string, unknown> }
  | { kind: 'error'; message: string };

export interface AuthzService {
  /** The cluster the service is reached through. */
  readonly cluster: string;
  check(input: CheckInput): Promise<AuthzDecision>;
}

export const okDecision = (): Extract<AuthzDecision, { kind: 'ok' }> => ({ kind: 'ok', set: [], append: [], appendIfPresent: [], remove: [], responseHeaders: [], setQuery: [], removeQuery: [] });

/** A ListStringMatcher: whether a (lower-case) header name matches one of its patterns; undefined when not configured. */
export function compileListMatcher(config: unknown): ((name: string) => boolean) | undefined {
  if (config === undefined) return undefined;
  const patterns = list(obj(config).patterns).map((p: JsonObject) => compileStringMatcher(p));
  return (name) => patterns.some((m) => m(name));
}
