import { obj } from '../../../../config/access.js';
import type { MutableHeaders } from '../../../../header-mutation.js';
import { getLogger } from '../../../../log/logger.js';
import { HostOp, LUA_LOG_LEVELS } from '../../../../lua/prelude.js';
import { readModule } from '../../../../lua/load-check.js';
import type { ArgReader, HostFunctions, LuaValue, OpResult, PendingOp, ResultWriter } from '../../../../lua/wasm-lua.js';
import { AsyncRequestError } from '../../../../upstream/async-request.js';
import type { FilterContext, FilterRequest } from '../../../../http/filter-api.js';

/**
 * The Lua filter's side of Envoy's stream handle API (./lua.ts runs the scripts): what a script's
 * handle calls reach — headers, body(), respond(), httpCall(), metadata(), streamInfo(),
 * connection(), logging — for the request (and response) of each run, found by its id.
 */

const log = getLogger('lua', import.meta.url);

/** Request and response, as the handle's `kind` says. */
export const REQUEST = 0;
export const RESPONSE = 1;

/** One script's run for one request (and its response), by id while the script may call back. */
interface Call {
  request: FilterRequest;
  filterName: string;
  clusters: FilterContext['clusters'];
  /** The listener's per_connection_buffer_limit_bytes: the most body() waits for (then 413, as Envoy's buffer limit). */
  bodyLimit: number;
  /** The response's status and headers, while envoy_on_response runs. */
  response?: { status: number; headers: MutableHeaders };
  kind: number;
}

/**
 * The runs in progress, by id: a slot array with a free list, each id a slot and its generation
 * (a handle kept past its request finds nothing). A Map keyed by ever-growing ids, with a delete
 * per request, made the worker collect its old generation every second and cost a fifth of its
 * throughput.
 */
class CallTable {
  private static readonly SPAN = 1 << 20;
  private readonly slots: (Call | undefined)[] = [];
  private readonly generations: number[] = [];
  private readonly free: number[] = [];

  add(call: Call): number {
    const slot = this.free.pop() ?? this.slots.length;
    this.slots[slot] = call;
    this.generations[slot] ??= 0;
    return this.generations[slot]! * CallTable.SPAN + slot;
  }

  get(id: number): Call | undefined {
    const slot = id % CallTable.SPAN;
    return this.generations[slot] === Math.floor(id / CallTable.SPAN) ? this.slots[slot] : undefined;
  }

  delete(id: number): void {
    const slot = id % CallTable.SPAN;
    if (this.generations[slot] !== Math.floor(id / CallTable.SPAN) || this.slots[slot] === undefined) return;
    this.slots[slot] = undefined;
    this.generations[slot]!++;
    this.free.push(slot);
  }
}

export const calls = new CallTable();

function callOf(id: number): Call {
  const call = calls.get(id);
  if (!call) throw new Error('this handle belongs to a request that has finished');
  return call;
}

/** The headers a handle of `kind` sees, pseudo-headers aside. */
function headersOf(call: Call, kind: number): MutableHeaders {
  if (kind === RESPONSE) {
    if (!call.response) throw new Error('response headers are not available yet');
    return call.response.headers;
  }
  return call.request.rq.headers as MutableHeaders;
}

function pseudo(call: Call, kind: number, key: string): string | undefined {
  if (kind === RESPONSE) return key === ':status' && call.response ? String(call.response.status) : undefined;
  const rq = call.request.rq;
  switch (key) {
    case ':path':
      return rq.path;
    case ':method':
      return rq.method;
    case ':authority':
      return rq.authority;
    case ':scheme':
      return call.request.connection.tls ? 'https' : 'http';
    default:
      return undefined;
  }
}

function setPseudo(call: Call, kind: number, key: string, value: string): void {
  const rq = call.request.rq;
  if (kind === REQUEST && key === ':path') rq.path = value;
  else if (kind === REQUEST && key === ':method') rq.method = value;
  else if (kind === REQUEST && key === ':authority') rq.authority = value;
  else throw new Error(`${key} cannot be changed here`);
}

function values(v: MutableHeaders[string]): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v.map(String) : [String(v)];
}

const PSEUDO_REQUEST = [':authority', ':path', ':method', ':scheme'];

/** The synchronous host functions every Lua state of the worker shares (they find their request by id). */
export const host: HostFunctions = {
  call(op: number, args: ArgReader, out: ResultWriter): void {
    if (op === HostOp.readModule) {
      out.bytes(readModule(args.text(1) ?? ''));
      return;
    }
    const call = callOf(args.number(1));
    switch (op) {
      case HostOp.headerGet: {
        const key = args.bytes(3)!.toLowerCase();
        out.bytes(key.startsWith(':') ? pseudo(call, args.number(2), key) : values(headersOf(call, args.number(2))[key]).join(',') || undefined);
        return;
      }
      case HostOp.headerGetAtIndex: {
        const key = args.bytes(3)!.toLowerCase();
        const all = key.startsWith(':') ? [pseudo(call, args.number(2), key)].filter((v) => v !== undefined) : values(headersOf(call, args.number(2))[key]);
        out.bytes(all[args.number(4)]);
        return;
      }
      case HostOp.headerNumValues: {
        const key = args.bytes(3)!.toLowerCase();
        out.value(key.startsWith(':') ? (pseudo(call, args.number(2), key) === undefined ? 0 : 1) : values(headersOf(call, args.number(2))[key]).length);
        return;
      }
      case HostOp.headerAdd:
      case HostOp.headerReplace: {
        const kind = args.number(2);
        const key = args.bytes(3)!.toLowerCase();
        const value = args.bytes(4) ?? String(args.number(4));
        if (key.startsWith(':')) return setPseudo(call, kind, key, value);
        const headers = headersOf(call, kind);
        const present = headers[key];
        if (op === HostOp.headerReplace || present === undefined) headers[key] = value;
        else headers[key] = key === 'set-cookie' ? [...values(present), value] : `${values(present).join(',')},${value}`;
        return;
      }
      case HostOp.headerRemove: {
        const key = args.bytes(3)!.toLowerCase();
        if (key.startsWith(':')) throw new Error(`${key} cannot be removed`);
        delete headersOf(call, args.number(2))[key];
        return;
      }
      case HostOp.headerList: {
        const kind = args.number(2);
        const headers = headersOf(call, kind);
        for (const key of kind === REQUEST ? PSEUDO_REQUEST : [':status']) {
          out.bytes(key);
          out.bytes(pseudo(call, kind, key));
        }
        for (const key in headers) {
          for (const v of values(headers[key])) {
            out.bytes(key);
            out.bytes(v);
          }
        }
        return;
      }
      case HostOp.log: {
        const level = LUA_LOG_LEVELS[args.number(2)] ?? 'info';
        const message = `script log: ${args.text(3) ?? ''}`;
        if (level === 'trace') log.trace(message);
        else if (level === 'debug') log.debug(message);
        else if (level === 'info') log.info(message);
        else if (level === 'warn') log.warn(message);
        else if (level === 'error') log.error(message);
        else log.critical(message);
        return;
      }
      case HostOp.routeMetadata: {
        const filterMetadata = obj(call.request.route?.metadata?.filter_metadata);
        const scope = obj(filterMetadata[call.filterName] ?? filterMetadata['envoy.filters.http.lua']);
        out.value(scope[args.text(2) ?? ''] as LuaValue);
        return;
      }
      case HostOp.streamInfo: {
        const c = call.request.connection;
        const address = (ip: string, port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);
        const what = args.text(2);
        if (what === 'protocol') out.text(c.protocol);
        else if (what === 'downstreamLocalAddress') out.text(address(c.localIp, c.localPort));
        else if (what === 'downstreamDirectRemoteAddress') out.text(address(c.directRemoteIp, c.directRemotePort));
        else if (what === 'downstreamRemoteAddress') out.text(address(c.remoteIp, c.remotePort));
        else if (what === 'requestedServerName') out.text(c.serverName ?? '');
        else out.text(call.request.route?.name ?? '');
        return;
      }
      case HostOp.dynamicMetadataGet:
        out.value(call.request.metadata()[args.text(2) ?? ''] as LuaValue);
        return;
      case HostOp.dynamicMetadataSet: {
        const metadata = call.request.metadata();
        (metadata[args.text(2) ?? ''] ??= {})[args.text(3) ?? ''] = args.value(4);
        return;
      }
      case HostOp.dynamicMetadataNamespaces:
        for (const ns of Object.keys(call.request.metadata())) out.text(ns);
        return;
      case HostOp.ssl:
        out.value(call.request.connection.tls);
        return;
      case HostOp.bodyIfRead: {
        if (args.number(2) === RESPONSE) throw new Error('body() of a response is not supported by this proxy (the response is not held back for a script)');
        // false: no body at all; nil: not read yet (the script waits for it).
        if (!call.request.hasBody()) out.value(false);
        else out.bytes(undefined);
        return;
      }
      case HostOp.setBody:
        call.request.replaceBody(Buffer.from(args.bytes(3) ?? '', 'latin1'));
        return;
      case HostOp.base64:
        out.text(Buffer.from(args.bytes(2) ?? '', 'latin1').toString('base64'));
        return;
      case HostOp.now:
        out.value(Date.now());
        return;
      case HostOp.httpCallAsync:
        void httpCall(call, [args.value(2), args.value(3), args.value(4), args.value(5)]).catch(() => undefined);
        return;
      default:
        throw new Error(`unknown host operation ${op}`);
    }
  },

  async wait(pending: PendingOp): Promise<OpResult> {
    const id = Number(pending.args[0]);
    const call = calls.get(id);
    if (!call) return 'stop';
    if (call.kind === RESPONSE) return { error: `${pending.op}() in envoy_on_response is not supported by this proxy (the response is not held back for a script)` };
    switch (pending.op) {
      case 'body': {
        const body = await call.request.readBody(call.bodyLimit);
        if (body === 'aborted') return 'stop';
        if (body === 'too_large') {
          call.request.flag(0, 'request_payload_too_large');
          call.request.reply(413, {}, 'Payload Too Large');
          return 'stop';
        }
        return { values: [body === undefined ? false : body.toString('latin1')] };
      }
      case 'httpCall':
        try {
          return { values: await httpCall(call, pending.args.slice(1)) };
        } catch (err) {
          return { error: (err as Error).message };
        }
      case 'respond': {
        const headers = obj(pending.args[1]) as Record<string, LuaValue>;
        const status = Number(headers[':status']);
        // As Envoy's luaRespond: a local reply is a final answer, 200 to 599.
        if (!Number.isInteger(status) || status < 200 || status >= 600) return { error: ':status must be between 200-599' };
        const out: MutableHeaders = {};
        for (const [k, v] of Object.entries(headers)) if (!k.startsWith(':') && v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.map(String) : String(v);
        call.request.flag(0, 'lua_response');
        call.request.reply(status, out, typeof pending.args[2] === 'string' ? pending.args[2] : '');
        return 'stop';
      }
      default:
        return { error: `unknown operation ${pending.op}` };
    }
  },
};

/** handle:httpCall(cluster, headers, body, timeout_ms): the response's headers (with :status) and body. */
async function httpCall(call: Call, [clusterName, headerTable, body, timeout]: LuaValue[]): Promise<LuaValue[]> {
  const cluster = typeof clusterName === 'string' ? call.clusters.get(clusterName) : undefined;
  if (!cluster) throw new Error('http call cluster invalid. Must be configured');
  const table = obj(headerTable) as Record<string, LuaValue>;
  const method = table[':method'];
  const path = table[':path'];
  const authority = table[':authority'];
  if (typeof method !== 'string' || typeof path !== 'string' || typeof authority !== 'string') throw new Error('http call must have headers :method, :path and :authority');
  const headers: string[] = ['host', authority];
  for (const [k, v] of Object.entries(table)) {
    if (k.startsWith(':') || v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) headers.push(k.toLowerCase(), String(item));
  }
  const payload = typeof body === 'string' && body !== '' ? Buffer.from(body, 'latin1') : null;
  if (payload) headers.push('content-length', String(payload.length));
  try {
    const response = await cluster.send({ method, path, headers, body: payload, timeoutMs: typeof timeout === 'number' && timeout > 0 ? timeout : 5000 });
    const out: Record<string, LuaValue> = { ':status': String(response.status) };
    for (const [k, v] of Object.entries(response.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(',') : v;
    return [out, response.body.toString('latin1')];
  } catch (err) {
    if (!(err instanceof AsyncRequestError)) throw err;
    // Envoy answers a failed call with a 503 of its own.
    return [{ ':status': '503' }, ''];
  }
}
