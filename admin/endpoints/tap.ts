import { PassThrough } from 'node:stream';
import { list, obj } from '../../shared/config/access.js';
import { durationMs, typeNameOfUrl } from '../../shared/config/wkt.js';
import type { JsonObject } from '../../shared/config/proto-json.js';
import type { FromAdmin, ToAdmin } from '../../shared/ipc.js';
import { getLogger } from '../../shared/log/logger.js';
import type { TapSession } from '../../shared/tap.js';
import { protoJson, type AdminEndpoint, type AdminResponse } from '../endpoint.js';
import type { SupervisorClient } from '../supervisor-client.js';

/**
 * POST /tap: Envoy's admin tap. The body is an envoy.admin.v3.TapRequest (YAML or JSON) naming
 * the config_id of a tap filter (envoy.filters.http.tap with admin_config) and a tap config:
 * a match predicate on request and response headers, and an admin sink. Every worker then taps
 * the matching exchanges of that filter; each trace (envoy.data.tap.v3.TraceWrapper, JSON with
 * every primitive field) is written to this response as it comes (`streaming_admin`), or
 * `max_traces` of them at once, or what arrived before `timeout`, and then the response ends
 * (`buffered_admin`). One attached session at a time; it ends when the client disconnects.
 * Without a tap filter configured the endpoint does not exist, as in Envoy.
 */

const log = getLogger('admin', import.meta.url);
const TAP_TYPE = 'envoy.extensions.filters.http.tap.v3.Tap';

/** The admin config ids of the bootstrap's tap filters. */
export function tapConfigIds(bootstrap: JsonObject): Set<string> {
  const ids = new Set<string>();
  for (const l of list(obj(bootstrap.static_resources).listeners)) {
    for (const chain of [...list(l.filter_chains), ...(l.default_filter_chain ? [obj(l.default_filter_chain)] : [])]) {
      for (const f of list(chain.filters)) {
        for (const h of list(obj(f.typed_config).http_filters)) {
          const typed = obj(h.typed_config);
          if (typeof typed['@type'] === 'string' && typeNameOfUrl(typed['@type']) === TAP_TYPE) {
            ids.add(String(obj(obj(typed.common_config).admin_config).config_id));
          }
        }
      }
    }
  }
  return ids;
}

interface Attached {
  session: TapSession;
  stream: PassThrough;
  /** buffered_admin: traces held until max_traces (or the timeout). */
  buffer?: { max: number; traces: JsonObject[] };
  timer?: NodeJS.Timeout;
}

const bad = (body: string): AdminResponse => ({ status: 400, body });

export class AdminTap {
  private attached: Attached | undefined;
  private nextSession = 1;

  constructor(
    private readonly configIds: Set<string>,
    private readonly supervisor: SupervisorClient,
    private readonly notify: (m: FromAdmin) => void,
  ) {}

  async handle(body: string): Promise<AdminResponse> {
    if (this.attached) return bad('An attached /tap admin stream already exists. Detach it.');
    if (body.trim() === '') return bad('/tap requires a JSON/YAML body');
    // The API schema (protobufjs, js-yaml) loads with the first request that needs it: the admin starts without it.
    const { readMessage } = await import('../../shared/config/message.js');
    const read = readMessage('envoy.admin.v3.TapRequest', body);
    if (!read.message) return bad(read.errors.join('\n'));
    const request = read.message;
    const configId = String(request.config_id);
    if (!this.configIds.has(configId)) return bad(`Unknown config id '${configId}'. No extension has registered with this id.`);
    const config = obj(request.tap_config);
    if (config.match === undefined && config.match_config === undefined) return bad('Neither match nor match_config is set in TapConfig');
    const sink = list(obj(config.output_config).sinks)[0] ?? {};
    const format = String(sink.format ?? 'JSON_BODY_AS_BYTES');
    if (format !== 'JSON_BODY_AS_BYTES' && format !== 'JSON_BODY_AS_STRING') return bad(`admin output only supports JSON formats (JSON_BODY_AS_BYTES, JSON_BODY_AS_STRING), not ${format}`);

    const session: TapSession = { id: this.nextSession++, configId, config };
    const stream = new PassThrough();
    const attached: Attached = { session, stream };
    if (sink.buffered_admin) {
      const buffered = obj(sink.buffered_admin);
      attached.buffer = { max: Number(buffered.max_traces), traces: [] };
      if (typeof buffered.timeout === 'string' && durationMs(buffered.timeout) > 0) {
        attached.timer = setTimeout(() => this.flushBuffer(attached), durationMs(buffered.timeout));
      }
    }
    this.attached = attached;
    stream.once('close', () => this.detach(attached));
    const started = await this.supervisor.request<Extract<ToAdmin, { type: 'done' }>>((id) => ({ type: 'tap_start', id, session }));
    if (!started) log.warn(`tap session for config_id=${configId}: not every worker confirmed it started`);
    log.debug(`tap admin request for config_id=${configId}`);
    return { status: 200, body: stream };
  }

  /** A worker's trace for the attached session. */
  onTrace(sessionId: number, trace: JsonObject): void {
    const a = this.attached;
    if (!a || a.session.id !== sessionId) return; // a trace of an ended session
    if (!a.buffer) {
      a.stream.write(protoJson(trace));
      return;
    }
    if (a.buffer.traces.length >= a.buffer.max) return;
    a.buffer.traces.push(trace);
    if (a.buffer.traces.length >= a.buffer.max) this.flushBuffer(a);
  }

  private flushBuffer(a: Attached): void {
    if (this.attached !== a || !a.buffer) return;
    for (const trace of a.buffer.traces) a.stream.write(protoJson(trace));
    a.stream.end();
  }

  private detach(a: Attached): void {
    if (this.attached !== a) return;
    clearTimeout(a.timer);
    this.attached = undefined;
    this.notify({ type: 'tap_stop', sessionId: a.session.id });
    log.debug(`detach tap admin request for config_id=${a.session.configId}`);
  }
}

export function tapEndpoints(bootstrap: JsonObject, supervisor: SupervisorClient, notify: (m: FromAdmin) => void): { endpoints: AdminEndpoint[]; tap?: AdminTap } {
  const ids = tapConfigIds(bootstrap);
  if (ids.size === 0) return { endpoints: [] };
  const tap = new AdminTap(ids, supervisor, notify);
  return {
    tap,
    endpoints: [{ path: '/tap', help: 'tap filter control', mutates: true, handle: (rq) => tap.handle(rq.body) }],
  };
}
