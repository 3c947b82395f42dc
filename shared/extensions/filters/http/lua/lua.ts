import { obj } from '../../../../config/access.js';
import { readDataSource } from '../../../../config/data-source.js';
import type { JsonObject } from '../../../../config/proto-json.js';
import type { MutableHeaders } from '../../../../header-mutation.js';
import { getLogger } from '../../../../log/logger.js';
import { stats } from '../../../../stats/process.js';
import type { Counter } from '../../../../stats/store.js';
import { PRELUDE } from '../../../../lua/prelude.js';
import { LuaScriptError, LuaState } from '../../../../lua/wasm-lua.js';
import { DEFAULT_BUFFER_LIMIT } from '../../../../config/buffer-limit.js';
import type { FilterContext, FilterDecision, FilterRequest, HttpFilter, HttpFilterFactory } from '../../../../http/filter-api.js';
import { calls, host, REQUEST, RESPONSE } from './lua-handle.js';

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

  /** As Envoy's: an earlier filter's answer goes through envoy_on_response (the script must have loaded by then). */
  answeredBefore(request: FilterRequest): void {
    const script = this.scriptFor(request.perRoute[0]);
    if (!script?.loaded?.defines('envoy_on_response')) return;
    const id = calls.add({ request, filterName: this.name, clusters: this.ctx.clusters, bodyLimit: this.ctx.bufferLimit ?? DEFAULT_BUFFER_LIMIT, kind: RESPONSE });
    this.call = { id, script };
    request.finished(() => calls.delete(id));
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
