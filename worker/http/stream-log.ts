import type { IncomingHttpHeaders } from 'node:http';
import { headerLines, streamTag, connectionTag } from '../../shared/log/log-tags.js';
import { Level } from '../../shared/log/levels.js';
import { getLogger } from '../../shared/log/logger.js';
import type { DownstreamRequest } from './downstream.js';
import { requestHasBody } from './request-body.js';

/**
 * A request's story at debug, as Envoy's connection manager (logger `http`) and router (`router`)
 * tell it, under the stream's tags: the stream's start and its request headers, the route and
 * cluster chosen, the headers sent upstream, the pool's answer, the upstream's response headers,
 * the headers encoded for the client, local replies with their details, retries and resets. Each
 * function tests its logger's level first: a disabled level costs that test.
 */

const http = getLogger('http', import.meta.url);
const router = getLogger('router', import.meta.url);

type Pairs = [string, string][];

/** A request's headers as Envoy's codec holds them: HTTP/1.1's host, path and method as :authority, :path, :method first. */
function requestPairs(req: DownstreamRequest): Pairs {
  const raw = req.rawHeaders;
  const out: Pairs = [];
  if (req.httpVersionMajor === 1) out.push([':authority', String(req.headers.host ?? '')], [':path', req.url ?? ''], [':method', req.method ?? '']);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (req.httpVersionMajor === 1 && name === 'host') continue;
    out.push([name, raw[i + 1]!]);
  }
  return out;
}

/** The stream began: `new stream`, `request headers complete`, and `request end stream` (now, or when the body ends). */
export function logRequestHeaders(req: DownstreamRequest): void {
  if (!http.enabled(Level.debug)) return;
  const hasBody = requestHasBody(req);
  http.debug(`${connectionTag(req.socket)}new stream`);
  http.debug(`${streamTag(req.socket, req)}request headers complete (end_stream=${!hasBody}):\n${headerLines(requestPairs(req))}`);
  if (!hasBody) http.debug(`${streamTag(req.socket, req)}request end stream`);
  else req.once('end', () => http.debug(`${streamTag(req.socket, req)}request end stream`));
}

export function logNoRoute(req: DownstreamRequest, path: string): void {
  if (router.enabled(Level.debug)) router.debug(`${streamTag(req.socket, req)}no route match for URL '${path}'`);
}

/** The route's cluster, as the router looks it up: `cluster 'x' match for URL '/p'`, or `unknown cluster 'x'`. */
export function logRoutedCluster(req: DownstreamRequest, cluster: string | undefined, path: string, clusters: { get(name: string): unknown }): void {
  if (!router.enabled(Level.debug)) return;
  const found = cluster !== undefined && clusters.get(cluster) !== undefined;
  router.debug(`${streamTag(req.socket, req)}${found ? `cluster '${cluster}' match for URL '${path}'` : `unknown cluster '${cluster ?? ''}'`}`);
}

/** The headers going upstream (a flat list, `host` the authority), pseudo-headers first as Envoy's router prints them. */
export function logDecodingHeaders(req: DownstreamRequest, method: string, path: string, scheme: string, flat: readonly string[]): void {
  if (!router.enabled(Level.debug)) return;
  const pairs: Pairs = [];
  let authority = '';
  for (let i = 0; i + 1 < flat.length; i += 2) {
    if (flat[i] === 'host') authority = flat[i + 1]!;
    else pairs.push([flat[i]!, flat[i + 1]!]);
  }
  router.debug(`${streamTag(req.socket, req)}router decoding headers:\n${headerLines([[':authority', authority], [':path', path], [':method', method], [':scheme', scheme], ...pairs])}`);
}

export function logPoolReady(req: DownstreamRequest): void {
  if (router.enabled(Level.debug)) router.debug(`${streamTag(req.socket, req)}pool ready`);
}

export function logUpstreamHeaders(req: DownstreamRequest, endStream: boolean): void {
  if (router.enabled(Level.debug)) router.debug(`${streamTag(req.socket, req)}upstream headers complete: end_stream=${endStream}`);
}

export function logRetry(req: DownstreamRequest): void {
  if (router.enabled(Level.debug)) router.debug(`${streamTag(req.socket, req)}performing retry`);
}

/** The response head as it goes to the client: `:status`, then its headers (an object, or a flat list). */
export function logEncodingHeaders(req: DownstreamRequest | undefined, status: number, headers: IncomingHttpHeaders | Record<string, unknown> | readonly string[], endStream: boolean): void {
  if (req === undefined || !http.enabled(Level.debug)) return;
  const pairs: Pairs = [[':status', String(status)]];
  if (Array.isArray(headers)) for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([String(headers[i]).toLowerCase(), String(headers[i + 1])]);
  else {
    for (const [k, v] of Object.entries(headers)) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) pairs.push([k.toLowerCase(), String(one)]);
    }
  }
  http.debug(`${streamTag(req.socket, req)}encoding headers via codec (end_stream=${endStream}):\n${headerLines(pairs)}`);
}

export function logLocalReply(req: DownstreamRequest | undefined, details: string | undefined): void {
  if (req !== undefined && http.enabled(Level.debug)) http.debug(`${streamTag(req.socket, req)}Sending local reply with details ${details ?? ''}`);
}

export function logEncodeComplete(req: DownstreamRequest): void {
  if (http.enabled(Level.debug)) http.debug(`${streamTag(req.socket, req)}Codec completed encoding stream.`);
}

/** Whether the request's story is being told (the connection manager then keeps an exchange record, for its details). */
export function streamLogOn(): boolean {
  return http.enabled(Level.debug);
}
