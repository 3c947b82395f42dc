import { isDeepStrictEqual } from 'node:util';
import type { envoy } from '../config/envoy-types.js';

/**
 * Which of a cluster's transport_socket_matches an endpoint's connections use, as Envoy's
 * TransportSocketMatcherImpl decides it (the metadata matches; the xDS `transport_socket_matcher`
 * is refused by name): the first match whose every `match` field the endpoint's
 * `envoy.transport_socket_match` metadata holds with an equal value, else the first that its
 * locality's metadata so matches, else the cluster's own transport_socket (-1). A match without
 * fields matches every endpoint (Envoy's metadataLabelMatch of an empty label set).
 */

export const TRANSPORT_SOCKET_MATCH_FILTER = 'envoy.transport_socket_match';

type Matches = envoy.config.cluster.v3.Cluster['transport_socket_matches'];
type Metadata = envoy.config.core.v3.Metadata | undefined;

function labelsMatch(labels: Record<string, unknown>, metadata: Metadata): boolean {
  const fields = metadata?.filter_metadata?.[TRANSPORT_SOCKET_MATCH_FILTER] as Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(labels)) {
    if (fields === undefined || !(key in fields) || !isDeepStrictEqual(fields[key], value)) return false;
  }
  return true;
}

export function transportSocketMatch(matches: Matches, endpoint: Metadata, locality: Metadata): number {
  if (!matches?.length) return -1;
  for (const metadata of [endpoint, locality]) {
    const i = matches.findIndex((m) => labelsMatch((m.match ?? {}) as Record<string, unknown>, metadata));
    if (i >= 0) return i;
  }
  return -1;
}

/** The name a match's stats go under (`cluster.<name>.<match>.total_match_count`): the match's, or `default`. */
export function transportSocketMatchName(matches: Matches, index: number): string {
  return index >= 0 ? String(matches?.[index]?.name ?? index) : 'default';
}
