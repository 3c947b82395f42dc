import type { RedirectAction, RequestView } from '../../shared/http/route-table.js';

/** Request targets and Host headers as the connection manager reads them, and the Location of a redirect. */

export function redirectLocation(a: RedirectAction, rq: RequestView, matchedPrefix: string | undefined): string {
  if (a.sslRedirect) return `https://${rq.authority}${rq.path}`;
  const [pathOnly, query] = splitQuery(rq.path);
  let path = pathOnly;
  if (a.path !== undefined) path = a.path;
  else if (a.prefixRewrite !== undefined && matchedPrefix !== undefined) path = a.prefixRewrite + pathOnly.slice(matchedPrefix.length);
  const scheme = a.scheme ?? 'http';
  let host = a.host ?? rq.authority;
  if (a.port !== undefined) host = `${host.replace(/:\d+$/, '')}:${a.port}`;
  else if (a.scheme === 'https') host = host.replace(/:80$/, '');
  const keepQuery = !a.stripQuery && query !== undefined && a.path?.includes('?') !== true;
  return `${scheme}://${host}${path}${keepQuery ? `?${query}` : ''}`;
}

/** `http://host[:port]/path?query` as its authority and origin-form path; undefined when it is not one. */
export function absoluteForm(target: string): { authority: string; path: string } | undefined {
  const m = /^https?:\/\/([^/?#]+)([^#]*)/i.exec(target);
  if (!m) return undefined;
  const rest = m[2]!;
  return { authority: m[1]!.replace(/^[^@]*@/, ''), path: rest.startsWith('/') ? rest : `/${rest}` };
}

export function hasDuplicateHost(raw: string[]): boolean {
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

export function splitQuery(path: string): [string, string | undefined] {
  const q = path.indexOf('?');
  return q < 0 ? [path, undefined] : [path.slice(0, q), path.slice(q + 1)];
}
