import type { IncomingHttpHeaders } from 'node:http';

/** Hop-by-hop headers are the connection's own, never forwarded either way (RFC 9110 §7.6.1; TE's `trailers` aside, see upstreamHeaders). */
export const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'http2-settings']);

/** The request headers as they go upstream: hop-by-hop and pseudo-headers out, the authority as host, the try's timeout announced (x-envoy-expected-rq-timeout-ms). */
export function upstreamHeaders(headers: IncomingHttpHeaders, authority: string, timeoutMs: number): string[] {
  const out: string[] = [];
  const connection = headers.connection;
  const dropped = connection ? connection.toLowerCase().split(',').map((t) => t.trim()) : undefined;
  for (const k in headers) {
    const v = headers[k];
    if (v === undefined || k === 'host' || HOP_BY_HOP.has(k) || k.charCodeAt(0) === 58 /* ':' */ || dropped?.includes(k)) {
      // Of TE only `trailers` goes on (gRPC servers ask for it), as Envoy sanitises it.
      if (k === 'te' && v !== undefined && !dropped?.includes(k) && acceptsTrailers(v)) out.push('te', 'trailers');
      continue;
    }
    // An internal client's x-envoy-expected-rq-timeout-ms gives way to this hop's own.
    if (timeoutMs > 0 && k === 'x-envoy-expected-rq-timeout-ms') continue;
    if (typeof v === 'string') out.push(k, v);
    else for (const item of v) out.push(k, item);
  }
  out.push('host', authority);
  // Last, so that a retry can update it in place (router.ts).
  if (timeoutMs > 0) out.push('x-envoy-expected-rq-timeout-ms', String(timeoutMs));
  return out;
}

function acceptsTrailers(te: string | string[]): boolean {
  return (Array.isArray(te) ? te.join(',') : te).split(',').some((t) => t.split(';')[0]!.trim().toLowerCase() === 'trailers');
}
