import type { JsonObject } from '../../../../config/proto-json.js';
import { obj } from '../../../../config/access.js';
import type { BodyCapture } from '../../../../http/body-capture.js';
import { sendToParent, type FromWorker } from '../../../../ipc.js';
import type { MutableHeaders } from '../../../../header-mutation.js';
import type { RequestView } from '../../../../matchers.js';
import { compileTap, type CompiledTap, type TapSession } from '../../../../tap.js';
import type { FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';

/**
 * envoy.filters.http.tap with admin_config, as Envoy's: at its place in the chain it takes the
 * request's headers as they reach it (after the filters before it) and the response's as they
 * come back to it (after the filters between it and the router); when the exchange ends, one that
 * matches the session's predicate becomes an envoy.data.tap.v3.TraceWrapper, sent to the
 * supervisor, which passes it to the admin's /tap stream. Sending is fire-and-forget: the data
 * plane never waits. The sessions (POST /tap) reach each worker by config id (startTap/stopTap);
 * with none on, the filter does nothing but look the id up.
 */

const sessions = new Map<string, CompiledTap>();

export function startTap(session: TapSession): void {
  sessions.set(session.configId, compileTap(session));
}

export function stopTap(sessionId: number): void {
  for (const [configId, tap] of sessions) if (tap.session.id === sessionId) sessions.delete(configId);
}

/** The session on for a tap filter's config id, if one is. */
export function activeTap(configId: string | undefined): CompiledTap | undefined {
  return configId === undefined ? undefined : sessions.get(configId);
}

/** The admin config_id of a tap filter's configuration. */
export function tapConfigId(config: JsonObject): string {
  return String(obj(obj(config.common_config).admin_config).config_id);
}

type HeaderList = [string, string][];

function listOf(headers: Record<string, unknown>, into: HeaderList): HeaderList {
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) into.push([k.toLowerCase(), String(item)]);
  }
  return into;
}

function message(headers: HeaderList, body: BodyCapture | undefined, asString: boolean): JsonObject {
  const out: JsonObject = { headers: headers.map(([key, value]) => ({ key, value })) };
  if (body && body.length > 0) {
    const bytes = body.bytes();
    // Envoy prints every primitive field: `truncated` even when false.
    out.body = asString ? { as_string: bytes.toString('utf8'), truncated: body.truncated } : { as_bytes: bytes.toString('base64'), truncated: body.truncated };
  }
  out.trailers = [];
  return out;
}

interface Tapped {
  tap: CompiledTap;
  request: RequestView;
  requestHeaders: HeaderList;
  bodies: { request: BodyCapture; response: BodyCapture } | undefined;
  responseHeaders?: HeaderList;
}

class TapFilter implements HttpFilter {
  private tapped: Tapped | undefined;

  constructor(private readonly configId: string) {}

  decodeHeaders(request: FilterRequest): FilterDecision {
    const tap = sessions.get(this.configId);
    if (!tap) return 'continue';
    const rq = request.rq;
    // The request as it is here: HTTP/2's pseudo-headers are among its headers, HTTP/1's are made.
    const requestHeaders: HeaderList = request.connection.protocol === 'HTTP/2' ? [] : [[':authority', rq.authority], [':path', rq.path], [':method', rq.method], [':scheme', request.connection.tls ? 'https' : 'http']];
    listOf(rq.headers, requestHeaders);
    const tapped: Tapped = { tap, request: { method: rq.method, path: rq.path, authority: rq.authority, headers: { ...rq.headers } }, requestHeaders, bodies: request.capturedBodies() };
    this.tapped = tapped;
    request.finished(() => offerTrace(tapped));
    return 'continue';
  }

  encodeHeaders(status: number, headers: MutableHeaders): void {
    if (this.tapped) this.tapped.responseHeaders = listOf(headers, [[':status', String(status)]]);
  }
}

/** The exchange ended: if it matches its session (still on), its trace goes to the admin. */
function offerTrace(t: Tapped): void {
  if (sessions.get(t.tap.session.configId) !== t.tap) return; // the session ended meanwhile
  const responseHeaders = t.responseHeaders ?? [];
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of responseHeaders) {
    const prior = headers[k];
    headers[k] = prior === undefined ? v : Array.isArray(prior) ? [...prior, v] : [prior, v];
  }
  if (!t.tap.matches(t.request, { method: '', path: '', authority: '', headers })) return;
  const trace = {
    http_buffered_trace: {
      request: message(t.requestHeaders, t.bodies?.request, t.tap.bodyAsString),
      response: message(responseHeaders, t.bodies?.response, t.tap.bodyAsString),
    },
  };
  sendToParent<FromWorker>({ type: 'tap_trace', sessionId: t.tap.session.id, trace });
}

export function tapFactory(name: string, config: JsonObject): HttpFilterFactory {
  const configId = tapConfigId(config);
  return { name, create: () => new TapFilter(configId) };
}
