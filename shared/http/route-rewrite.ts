import type { ForwardAction, RedirectAction, RequestView, Route } from './route-table.js';

/**
 * What a route makes of a request's target, shared by the workers (worker/http/route-dispatch.ts)
 * and the tools that explain a route (/route_explain, `proxy route-check`): the path the upstream
 * gets after prefix_rewrite or regex_rewrite, and the Location of a redirect.
 */

export function splitQuery(path: string): [string, string | undefined] {
  const q = path.indexOf('?');
  return q < 0 ? [path, undefined] : [path.slice(0, q), path.slice(q + 1)];
}

/**
 * The path the upstream gets, as Envoy's finalizePathHeader makes it: prefix_rewrite replaces the
 * prefix the route matched; regex_rewrite rewrites the path without its query, which goes on as it
 * came. Undefined when the route rewrites nothing.
 */
export function rewrittenPath(route: Route, action: ForwardAction, path: string): string | undefined {
  if (action.prefixRewrite !== undefined && route.prefix !== undefined) return action.prefixRewrite + path.slice(route.prefix.length);
  if (!action.regexRewrite) return undefined;
  const [pathOnly, query] = splitQuery(path);
  return action.regexRewrite(pathOnly) + (query !== undefined ? `?${query}` : '');
}

/**
 * The URI a redirect sends the client to, as Envoy's newUri makes it: scheme_redirect, or https for
 * https_redirect, else the request's own scheme (x-forwarded-proto, which the connection manager
 * has set); host_redirect or the request's Host, with port_redirect; path_redirect, or the path
 * with prefix_rewrite, or the path; the query kept unless strip_query. A direct response's URI is
 * that of an empty redirect: the request's own.
 */
export function redirectLocation(a: RedirectAction, rq: RequestView, matchedPrefix: string | undefined): string {
  if (a.sslRedirect) return `https://${rq.authority}${rq.path}`;
  const [pathOnly, query] = splitQuery(rq.path);
  let path = pathOnly;
  if (a.path !== undefined) path = a.path;
  else if (a.prefixRewrite !== undefined && matchedPrefix !== undefined) path = a.prefixRewrite + pathOnly.slice(matchedPrefix.length);
  const forwarded = rq.headers['x-forwarded-proto'];
  const scheme = a.scheme ?? (forwarded === 'https' ? 'https' : 'http');
  let host = a.host ?? rq.authority;
  if (a.port !== undefined) host = `${host.replace(/:\d+$/, '')}:${a.port}`;
  else if (a.scheme === 'https') host = host.replace(/:80$/, '');
  else if (a.scheme === 'http') host = host.replace(/:443$/, '');
  const keepQuery = !a.stripQuery && query !== undefined && a.path?.includes('?') !== true;
  return `${scheme}://${host}${path}${keepQuery ? `?${query}` : ''}`;
}
