import { appendVia, serverValue, type ServerHeader } from './server-header.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { ResponseFlag, type AccessLogEntry } from '../../shared/access-log/entry.js';
import { applyHeaderMutations, type HeaderMutationLevel, type MutableHeaders } from '../../shared/header-mutation.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { Cluster } from '../upstream/cluster.js';
import type { ClusterManager } from '../upstream/cluster-manager.js';
import type { DownstreamResponse } from './downstream.js';
import type { HttpExchangeRecord } from './exchange-record.js';
import { sendLocalReply, type LocalReplyContext } from './local-reply.js';
import type { ForwardAction } from '../../shared/http/route-table.js';
import { HOP_BY_HOP } from './upstream-headers.js';

/**
 * What the router (router.ts, forward.ts) and the upgrade router (upgrade-router.ts) share: the
 * request as routed, the cluster it goes to, and the response headers the client gets.
 */

export interface ForwardContext {
  /** The connection manager's figures (no_cluster). */
  stats: HttpStats;
  clusters: ClusterManager;
  server: ServerHeader;
  /** The router's suppress_envoy_headers: no x-envoy-upstream-service-time, x-envoy-expected-rq-timeout-ms, x-envoy-overloaded. */
  suppressEnvoyHeaders: boolean;
  /** The listener's per_connection_buffer_limit_bytes: what the client's side may hold unwritten. */
  bufferLimit: number;
  /** How this request's local replies are made (local_reply_config). */
  reply: LocalReplyContext;
  /** The route's response header mutations, with what their values are formatted from. */
  responseHeaders?: { levels: HeaderMutationLevel[]; entry: AccessLogEntry };
  /** The HTTP filters' view of the response headers, after the route's mutations. */
  encode?: (status: number, headers: MutableHeaders) => void;
  /** The HTTP filters' view of the upstream's trailers. */
  encodeTrailers?: (trailers: MutableHeaders) => void;
  /** http_protocol_options.enable_trailers: trailers go to an HTTP/1.1 client too (chunked responses only). */
  http1Trailers?: boolean;
  /** scheme_header_transformation.match_upstream: an HTTP/2 upstream's :scheme is its connection's transport. */
  schemeMatchesUpstream?: boolean;
  /** The request headers as they go upstream (x-forwarded-for, x-request-id … already set). */
  headers: IncomingHttpHeaders;
  /** The path after any prefix rewrite. */
  path: string;
  authority: string;
  /** The access-log entry, when the listener logs. */
  record?: HttpExchangeRecord;
  /** The cluster chosen when the request was routed (one of weighted_clusters, by weight). */
  clusterName: string | undefined;
  /** The request body as filters left it: read whole (buffer), or a stream of it transformed (decompressor). */
  body?: Buffer | Readable;
  /** The route's hash_policy result: the hash a RING_HASH or MAGLEV cluster picks by, and cookies it generated. */
  hash?: bigint;
  setCookies?: string[];
}

/** The cluster the request was routed to; without one (not configured, or removed), the route's cluster_not_found_response_code. */
export function routedCluster(res: DownstreamResponse, action: ForwardAction, ctx: ForwardContext): Cluster | undefined {
  const cluster = ctx.clusterName !== undefined ? ctx.clusters.get(ctx.clusterName) : undefined;
  if (cluster) return cluster;
  ctx.stats.noCluster.inc();
  if (ctx.record) {
    ctx.record.responseFlags |= ResponseFlag.noClusterFound;
    ctx.record.responseCodeDetails = 'cluster_not_found';
  }
  sendLocalReply(res, action.clusterNotFoundStatus, '', ctx.reply);
  return undefined;
}

/**
 * An HTTP/2 upstream's headers-only answer, set and not written: the end that follows sends it as
 * one HEADERS frame that ends the stream, as it came (HEADERS then an empty DATA would not be a
 * gRPC trailers-only reply).
 */
export function setHeadOnly(res: DownstreamResponse, status: number, flat: string[]): void {
  res.statusCode = status;
  const grouped = new Map<string, string[]>();
  for (let i = 0; i < flat.length; i += 2) {
    const values = grouped.get(flat[i]!);
    if (values) values.push(flat[i + 1]!);
    else grouped.set(flat[i]!, [flat[i + 1]!]);
  }
  for (const [k, v] of grouped) res.setHeader(k, v.length === 1 ? v[0]! : v);
}

export function hasAny(headers: object): boolean {
  for (const _ in headers) return true;
  return false;
}

/**
 * The upstream's trailers (a gRPC status): through the filters (gRPC-Web makes a body frame of
 * them), then to an HTTP/2 client. Envoy's HTTP/1 codec drops proxied trailers unless
 * `enable_trailers`; so does this (and Node sends them only on a chunked response).
 */
export function sendTrailers(trailers: IncomingHttpHeaders, http2Client: boolean, res: DownstreamResponse, ctx: ForwardContext): void {
  const out: MutableHeaders = {};
  for (const k in trailers) if (k.charCodeAt(0) !== 58 /* ':' */ && trailers[k] !== undefined) out[k] = trailers[k]!;
  ctx.encodeTrailers?.(out);
  if ((http2Client || ctx.http1Trailers) && hasAny(out)) res.addTrailers(out as Record<string, string>);
}

/**
 * The upstream's response headers as the client gets them: the route's response_headers_to_add
 * and _to_remove, then the HTTP filters', on a copy (the upstream's stay as they came); without
 * hop-by-hop headers (`keep` aside: an upgrade's Upgrade and Connection); with this proxy's
 * server header and x-envoy-upstream-service-time. A flat [name, value, …] list.
 */
export function downstreamResponseHeaders(statusCode: number, headers: IncomingHttpHeaders, ctx: ForwardContext, startedMs: number, keep?: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const mutations = ctx.responseHeaders;
  const encode = ctx.encode;
  let source: Record<string, unknown> = headers;
  if (mutations || encode) {
    const copy: MutableHeaders = { ...headers };
    if (mutations) applyHeaderMutations(copy, mutations.levels, Object.create(mutations.entry, { responseCode: { value: statusCode } }) as AccessLogEntry);
    encode?.(statusCode, copy);
    source = copy;
  }
  for (const k in source) {
    const v = source[k] as string | string[] | number | undefined;
    if (v === undefined || (HOP_BY_HOP.has(k) && !keep?.has(k)) || k === 'server' || k.charCodeAt(0) === 58 /* ':' */ || (k === 'via' && ctx.server.via !== undefined)) continue;
    if (typeof v !== 'object') out.push(k, String(v));
    else for (const item of v) out.push(k, item);
  }
  const server = ctx.server.mode === 'OVERWRITE' ? ctx.server.name : serverValue(ctx.server, source.server);
  if (server !== undefined) out.push('server', server);
  if (ctx.server.via !== undefined) out.push('via', appendVia(source.via, ctx.server.via));
  if (!ctx.suppressEnvoyHeaders) out.push('x-envoy-upstream-service-time', String(Math.round(performance.now() - startedMs)));
  for (const cookie of ctx.setCookies ?? []) out.push('set-cookie', cookie);
  return out;
}
