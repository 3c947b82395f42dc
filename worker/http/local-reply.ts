import type { ServerResponse } from 'node:http';

/**
 * Responses the proxy makes itself, with Envoy's status codes and bodies, so that clients and
 * dashboards that know Envoy's failures recognise these.
 */
export const LocalReply = {
  noRoute: { status: 404, body: '' },
  noHealthyUpstream: { status: 503, body: 'no healthy upstream' },
  connectFailure: { status: 503, body: 'upstream connect error or disconnect/reset before headers. reset reason: connection failure' },
  connectionTermination: { status: 503, body: 'upstream connect error or disconnect/reset before headers. reset reason: connection termination' },
  upstreamTimeout: { status: 504, body: 'upstream request timeout' },
  overflow: { status: 503, body: 'upstream connect error or disconnect/reset before headers. reset reason: overflow' },
  streamIdleTimeout: { status: 408, body: 'stream timeout' },
  tooManyHeaders: { status: 431, body: '' },
} as const;

export interface LocalReplyContext {
  serverName: string;
  /** Headers to add (e.g. x-envoy-immediate-health-check-fail). */
  extraHeaders?: Record<string, string>;
}

export function sendLocalReply(res: ServerResponse, status: number, body: string | Buffer, ctx: LocalReplyContext, contentType = 'text/plain'): void {
  if (res.headersSent) {
    // Too late for a status: the client sees the stream cut, as Envoy resets it.
    res.destroy();
    return;
  }
  const headers: Record<string, string | number> = { server: ctx.serverName, 'content-length': Buffer.byteLength(body), ...ctx.extraHeaders };
  if (Buffer.byteLength(body) > 0) headers['content-type'] = contentType;
  res.writeHead(status, headers);
  res.end(body);
}
