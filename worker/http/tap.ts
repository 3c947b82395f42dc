import type { DownstreamRequest } from './downstream.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import { sendToParent, type FromWorker } from '../../shared/ipc.js';
import type { RequestView } from '../../shared/matchers.js';
import { compileTap, type CompiledTap, type TapSession } from '../../shared/tap.js';
import type { BodyCapture, HttpExchangeRecord } from './exchange-record.js';

/**
 * The HTTP tap filter's side in a worker (envoy.filters.http.tap with admin_config): the tap
 * sessions POST /tap opened, by config id. A connection manager whose tap filter has that id
 * records each exchange (headers, and bodies up to the session's limits); when the response
 * closes, a matching exchange becomes an envoy.data.tap.v3.TraceWrapper sent to the supervisor,
 * which passes it to the admin process. Sending is fire-and-forget: the data plane never waits.
 */

const sessions = new Map<string, CompiledTap>();

export function startTap(session: TapSession): void {
  sessions.set(session.configId, compileTap(session));
}

export function stopTap(sessionId: number): void {
  for (const [configId, tap] of sessions) if (tap.session.id === sessionId) sessions.delete(configId);
}

export function activeTap(configId: string | undefined): CompiledTap | undefined {
  return configId === undefined ? undefined : sessions.get(configId);
}

function headerList(req: DownstreamRequest, rq: RequestView): [string, string][] {
  const out: [string, string][] = [];
  if (req.httpVersionMajor !== 2) out.push([':authority', rq.authority], [':path', rq.path], [':method', rq.method], [':scheme', 'http']);
  for (const [k, v] of Object.entries(rq.headers)) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) out.push([k, item]);
  }
  return out;
}

function message(headers: [string, string][], body: BodyCapture | undefined, asString: boolean): JsonObject {
  const out: JsonObject = { headers: headers.map(([key, value]) => ({ key, value })) };
  if (body && body.length > 0) {
    const bytes = body.bytes();
    // Envoy prints every primitive field: `truncated` even when false.
    out.body = asString ? { as_string: bytes.toString('utf8'), truncated: body.truncated } : { as_bytes: bytes.toString('base64'), truncated: body.truncated };
  }
  out.trailers = [];
  return out;
}

/** The response closed: if the exchange matches the session, send its trace. */
export function offerTrace(tap: CompiledTap, req: DownstreamRequest, status: number, record: HttpExchangeRecord): void {
  if (sessions.get(tap.session.configId) !== tap) return; // the session ended meanwhile
  const responseHeaders = record.responseHeaderList(status);
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of responseHeaders) {
    const prior = headers[k];
    headers[k] = prior === undefined ? v : Array.isArray(prior) ? [...prior, v] : [prior, v];
  }
  const response: RequestView = { method: '', path: '', authority: '', headers };
  if (!tap.matches(record.request, response)) return;
  const trace = {
    http_buffered_trace: {
      request: message(headerList(req, record.request), record.requestBody, tap.bodyAsString),
      response: message(responseHeaders, record.responseBody, tap.bodyAsString),
    },
  };
  sendToParent<FromWorker>({ type: 'tap_trace', sessionId: tap.session.id, trace });
}
