import { obj } from '../../../shared/config/access.js';
import { readDataSource } from '../../../shared/config/data-source.js';
import type { JsonObject } from '../../../shared/config/proto-json.js';
import type { MutableHeaders } from '../../../shared/header-mutation.js';
import { getLogger } from '../../../shared/log/logger.js';
import { stats } from '../../../shared/stats/process.js';
import type { Counter } from '../../../shared/stats/store.js';
import { HostOp, LUA_LOG_LEVELS, PRELUDE } from '../../../shared/lua/prelude.js';
import { readModule } from '../../../shared/lua/load-check.js';
import { LuaScriptError, LuaState, type ArgReader, type HostFunctions, type LuaValue, type OpResult, type PendingOp, type ResultWriter } from '../../../shared/lua/wasm-lua.js';
import { AsyncRequestError, sendToCluster } from '../../upstream/async-client.js';
import { DEFAULT_BUFFER_LIMIT } from '../../../shared/config/buffer-limit.js';
import type { FilterContext, FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from './http-filter.js';

/**
 * envoy.filters.http.lua, as Envoy's: a script's `envoy_on_request(handle)` runs when a request's
 * headers arrive and `envoy_on_response(handle)` when its response's do, with Envoy's stream
 * handle API (./../../lua/prelude.ts): headers (get, getAtIndex, getNumValues, add, replace,
 * remove, pairs; pseudo-headers too), body() (the request body, waited for), respond(),
 * httpCall() to a cluster (waited for, or asynchronous), metadata() (the route's, under the
 * filter's name), streamInfo() (addresses, protocol, route name, dynamic metadata),
 * connection():ssl(), logging, base64Escape and timestamps. Each script has a Lua state of its own
 * in each worker, as in Envoy; a request runs in a coroutine of it, so a script that waits holds
 * only its own request. A script error is logged and counted
 * (http.<prefix>.lua.[<stat_prefix>.]errors), and the request goes on; every run counts in
 * `executions`. The scripts: `default_source_code` (or the deprecated `inline_code`), and per
 * route a LuaPerRoute naming one of `source_codes`, giving its own `source_code`, or `disabled`.
 */

const log = getLogger('lua', import.meta.url);

/** Request and response, as the handle's `kind` says. */
const REQUEST = 0;
const RESPONSE = 1;


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

const calls = new CallTable();

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
const host: HostFunctions = {
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
        else if (what === 'downstreamRemoteAddress') out.text(address(c.remoteIp, c.remoteIp === c.directRemoteIp ? c.directRemotePort : 0));
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
    const response = await sendToCluster(cluster, { method, path, headers, body: payload, timeoutMs: typeof timeout === 'number' && timeout > 0 ? timeout : 5000 });
    const out: Record<string, LuaValue> = { ':status': String(response.status) };
    for (const [k, v] of Object.entries(response.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(',') : v;
    return [out, response.body.toString('latin1')];
  } catch (err) {
    if (!(err instanceof AsyncRequestError)) throw err;
    // Envoy answers a failed call with a 503 of its own.
    return [{ ':status': '503' }, ''];
  }
}

interface Counters {
  errors: Counter;
  executions: Counter;
}

/** A script: its Lua state in this worker (being loaded, then loaded; or failed to load). */
class Script {
  private state: LuaState | undefined;
  private failed = false;
  readonly ready: Promise<void>;

  constructor(source: string, name: string, counters: Counters) {
    this.ready = LuaState.create(PRELUDE, source, name, host).then(
      (state) => {
        this.state = state;
      },
      (err: Error) => {
        this.failed = true;
        counters.errors.inc();
        log.error(`script ${name} failed to load: ${err.message}`);
      },
    );
  }

  /** The state once loaded (undefined while it loads or if it failed). */
  get loaded(): LuaState | undefined {
    return this.state;
  }

  get broken(): boolean {
    return this.failed;
  }
}

const scriptsByConfig = new WeakMap<JsonObject, Script>();

class LuaFilter implements HttpFilter {
  private call: { id: number; script: Script } | undefined;

  constructor(
    private readonly name: string,
    private readonly defaultScript: Script | undefined,
    private readonly named: Map<string, Script>,
    private readonly counters: Counters,
    private readonly ctx: FilterContext,
  ) {}

  decodeHeaders(request: FilterRequest): FilterDecision | Promise<FilterDecision> {
    const script = this.scriptFor(request.perRoute[0]);
    if (!script) return 'continue';
    const state = script.loaded;
    if (state) return this.start(request, script, state);
    return script.ready.then(() => (script.loaded ? this.start(request, script, script.loaded) : 'continue'));
  }

  /**
   * The request's run. Its id lives until envoy_on_response has run, or the exchange is over;
   * without envoy_on_response, until the request's own run ends.
   */
  private start(request: FilterRequest, script: Script, state: LuaState): FilterDecision | Promise<FilterDecision> {
    const onResponse = state.defines('envoy_on_response');
    if (!onResponse && !state.defines('envoy_on_request')) return 'continue';
    const id = calls.add({ request, filterName: this.name, clusters: this.ctx.clusters, bodyLimit: this.ctx.bufferLimit ?? DEFAULT_BUFFER_LIMIT, kind: REQUEST });
    this.call = { id, script };
    if (onResponse) request.finished(() => calls.delete(id));
    const decision = this.runRequest(state, id);
    if (onResponse) return decision;
    if (typeof decision === 'string') {
      calls.delete(id);
      return decision;
    }
    return decision.finally(() => calls.delete(id));
  }

  encodeHeaders(status: number, headers: MutableHeaders): void {
    const c = this.call;
    const state = c?.script.loaded;
    const call = c && calls.get(c.id);
    if (!call || !state) return;
    call.kind = RESPONSE;
    call.response = { status, headers };
    this.counters.executions.inc();
    try {
      const result = state.run(RESPONSE, c.id);
      if (typeof result === 'string') calls.delete(c.id);
      else void result.catch((err: Error) => this.scriptError(err)).finally(() => calls.delete(c.id));
    } catch (err) {
      calls.delete(c.id);
      this.scriptError(err as Error);
    }
  }

  private runRequest(state: LuaState, id: number): FilterDecision | Promise<FilterDecision> {
    if (!state.defines('envoy_on_request')) return 'continue';
    this.counters.executions.inc();
    try {
      const result = state.run(REQUEST, id);
      if (typeof result === 'string') return result === 'stopped' ? 'stop' : 'continue';
      return result.then(
        (r) => (r === 'stopped' ? 'stop' : 'continue'),
        (err: Error) => this.scriptError(err),
      );
    } catch (err) {
      return this.scriptError(err as Error);
    }
  }

  /** As Envoy: the error is logged and counted, and the request goes on. */
  private scriptError(err: Error): 'continue' {
    if (!(err instanceof LuaScriptError)) throw err;
    this.counters.errors.inc();
    log.error(`script error: ${err.stack ?? err.message}`);
    return 'continue';
  }

  private scriptFor(perRoute: JsonObject | undefined): Script | undefined {
    if (!perRoute) return this.defaultScript;
    if (perRoute.disabled === true) return undefined;
    if (typeof perRoute.name === 'string') return this.named.get(perRoute.name);
    if (perRoute.source_code !== undefined) {
      let script = scriptsByConfig.get(perRoute);
      if (!script) scriptsByConfig.set(perRoute, (script = new Script((readDataSource(obj(perRoute.source_code)) ?? Buffer.alloc(0)).toString('utf8'), 'route.lua', this.counters)));
      return script;
    }
    return this.defaultScript;
  }
}

export function luaFactory(name: string, config: JsonObject, ctx: FilterContext): HttpFilterFactory {
  const statPrefix = typeof config.stat_prefix === 'string' && config.stat_prefix ? `${config.stat_prefix}.` : '';
  const prefix = `http.${ctx.statPrefix}.lua.${statPrefix}`;
  const counters: Counters = { errors: stats.counter(`${prefix}errors`), executions: stats.counter(`${prefix}executions`) };
  const code = config.default_source_code !== undefined ? (readDataSource(obj(config.default_source_code)) ?? Buffer.alloc(0)).toString('utf8') : typeof config.inline_code === 'string' && config.inline_code ? config.inline_code : undefined;
  const defaultScript = code !== undefined ? new Script(code, 'envoy.lua', counters) : undefined;
  const named = new Map<string, Script>();
  for (const [key, source] of Object.entries(obj(config.source_codes))) named.set(key, new Script((readDataSource(obj(source)) ?? Buffer.alloc(0)).toString('utf8'), `${key}.lua`, counters));
  return { name, create: () => new LuaFilter(name, defaultScript, named, counters, ctx) };
}
