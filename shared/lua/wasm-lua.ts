import { createRequire } from 'node:module';
import type { LuaFactory } from 'wasmoon';

/**
 * Lua 5.4 (wasmoon: the reference interpreter compiled to WebAssembly) driven through its C API
 * directly. Measured against fengari (pure JS, Lua 5.3) on this machine: 3.6× less CPU per
 * script run, 1.6× cheaper suspensions, and a state that fails cleanly when it runs out of
 * memory. wasmoon's own conveniences (proxied JS objects, `global.set`, Promise `:await()`) cost
 * 5-40× more and `:await()` leaks, so none of them is used: a script talks to its host through
 * one C function (`__host(op, id, …)`) and a Lua-side handle (./prelude.ts), and everything
 * that waits (a body, a call to a cluster) is a coroutine yield that this driver resumes when
 * the JS promise settles. One coroutine per run, reused once it finishes.
 */

/** The emscripten runtime of wasmoon's module (heap views are replaced when memory grows: read them each time). */
interface LuaRuntime {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  addFunction(fn: (L: number) => number, signature: string): number;
  stringToNewUTF8(s: string): number;
}

/** The C functions of Lua (and libc's allocator) this binding calls. */
interface LuaApi {
  malloc(n: number): number;
  free(p: number): void;
  luaL_loadbufferx(L: number, buf: number, size: number, name: number, mode: number): number;
  lua_pcallk(L: number, nargs: number, nresults: number, errfunc: number, ctx: number, k: number): number;
  lua_resume(L: number, from: number, nargs: number, nresults: number): number;
  lua_newthread(L: number): number;
  luaL_ref(L: number, t: number): number;
  luaL_unref(L: number, t: number, ref: number): void;
  lua_rawgeti(L: number, idx: number, n: bigint): number;
  lua_getglobal(L: number, name: number): number;
  lua_setglobal(L: number, name: number): void;
  lua_pushcclosure(L: number, fn: number, n: number): void;
  lua_gettop(L: number): number;
  lua_settop(L: number, idx: number): void;
  lua_type(L: number, idx: number): number;
  lua_tolstring(L: number, idx: number, len: number): number;
  lua_tonumberx(L: number, idx: number, isnum: number): number;
  lua_toboolean(L: number, idx: number): number;
  lua_pushlstring(L: number, s: number, len: number): number;
  lua_pushnumber(L: number, n: number): void;
  lua_pushboolean(L: number, b: number): void;
  lua_pushnil(L: number): void;
  lua_createtable(L: number, narr: number, nrec: number): void;
  lua_rawset(L: number, idx: number): void;
  lua_next(L: number, idx: number): number;
  lua_checkstack(L: number, n: number): number;
  lua_error(L: number): number;
  luaL_traceback(L: number, L1: number, msg: number, level: number): void;
}

/**
 * The C functions, called on the WebAssembly instance's exports directly. wasmoon's build wraps
 * each export in a debug-checking function that allocates an `arguments` object per call (six
 * times slower, and most of a script run's garbage); the instance is caught as it is created.
 * Without it, the wrappers do the same job.
 */
async function loadModule(): Promise<{ runtime: LuaRuntime; api: LuaApi; factory: LuaFactory }> {
  const wasm = (globalThis as unknown as { WebAssembly: { instantiate: (...args: unknown[]) => Promise<unknown> } }).WebAssembly;
  const original = wasm.instantiate;
  let exports: Record<string, unknown> | undefined;
  wasm.instantiate = async function (this: unknown, ...args: unknown[]) {
    const result = (await original.apply(this, args)) as { instance?: { exports: Record<string, unknown> } };
    exports ??= result.instance?.exports;
    return result;
  };
  let factory: LuaFactory;
  let runtime: LuaRuntime & Record<string, unknown>;
  try {
    // Required, not imported: a role's bundle is a script, where import() has no loader (bin/role-launcher.cjs).
    factory = new (createRequire(import.meta.url)('wasmoon') as typeof import('wasmoon')).LuaFactory();
    runtime = (await factory.getLuaModule()).module as unknown as LuaRuntime & Record<string, unknown>;
  } finally {
    wasm.instantiate = original;
  }
  const api = {} as Record<string, unknown>;
  for (const name of API_NAMES) {
    const direct = exports?.[name];
    api[name] = typeof direct === 'function' ? direct : runtime[`_${name}`];
  }
  return { runtime, api: api as unknown as LuaApi, factory };
}

const API_NAMES = ['malloc', 'free', 'luaL_loadbufferx', 'lua_pcallk', 'lua_resume', 'lua_newthread', 'luaL_ref', 'luaL_unref', 'lua_rawgeti', 'lua_getglobal', 'lua_setglobal', 'lua_pushcclosure', 'lua_gettop', 'lua_settop', 'lua_type', 'lua_tolstring', 'lua_tonumberx', 'lua_toboolean', 'lua_pushlstring', 'lua_pushnumber', 'lua_pushboolean', 'lua_pushnil', 'lua_createtable', 'lua_rawset', 'lua_next', 'lua_checkstack', 'lua_error', 'luaL_traceback'];

const REGISTRY = -1_000_000 - 1000; // LUA_REGISTRYINDEX with LUAI_MAXSTACK = 1e6
const LUA_OK = 0;
const LUA_YIELD = 1;
export const T_NIL = 0;
export const T_BOOLEAN = 1;
export const T_NUMBER = 3;
export const T_STRING = 4;
export const T_TABLE = 5;

/** A Lua value crossing to JS: nil, booleans, numbers, strings, tables (as plain objects, or arrays when keyed 1…n). */
export type LuaValue = undefined | boolean | number | string | LuaValue[] | { [key: string]: LuaValue };

/** What a run asks of its host while it waits: an operation by name, its arguments. */
export interface PendingOp {
  op: string;
  args: LuaValue[];
}

/** The host's answer to a waiting operation: values to resume with, an error raised at the script's line, or none (the run stops). */
export type OpResult = { values: LuaValue[] } | { error: string } | 'stop';

export interface HostFunctions {
  /** A synchronous call from the script (`__host(op, …)`): its arguments read by the getters given, its results pushed. */
  call(op: number, args: ArgReader, out: ResultWriter): void;
  /** A yielded operation: the promise's answer resumes the coroutine. */
  wait(op: PendingOp): Promise<OpResult>;
}

/** Reads the arguments of a host call (1-based after the op code). */
export interface ArgReader {
  count: number;
  number(i: number): number;
  /** Byte-preserving: each byte one char (header names and values, bodies as Node's latin1). */
  bytes(i: number): string | undefined;
  /** UTF-8 text (log lines, metadata keys). */
  text(i: number): string | undefined;
  value(i: number): LuaValue;
}

export interface ResultWriter {
  bytes(s: string | undefined): void;
  text(s: string | undefined): void;
  value(v: LuaValue): void;
}

export class LuaScriptError extends Error {
  override name = 'LuaScriptError';
}

let loading: Promise<{ runtime: LuaRuntime; api: LuaApi; factory: LuaFactory }> | undefined;

/** One Lua state with a script loaded: its entry points run as coroutines. */
export class LuaState {
  private readonly m: LuaRuntime;
  private readonly c: LuaApi;
  private readonly L: number;
  private readonly lenPtr: number;
  private readonly nresPtr: number;
  private scratch: number;
  private scratchSize = 1024;
  private readonly names = new Map<string, number>();
  private readonly pool: { co: number; ref: number }[] = [];
  private entryRef = 0;
  private readonly decoder = new TextDecoder();
  private readonly encoder = new TextEncoder();

  private constructor(
    module: { runtime: LuaRuntime; api: LuaApi },
    L: number,
    private readonly host: HostFunctions,
  ) {
    this.m = module.runtime;
    this.c = module.api;
    this.L = L;
    this.lenPtr = this.c.malloc(8);
    this.nresPtr = this.c.malloc(8);
    this.scratch = this.c.malloc(this.scratchSize);
  }

  /** A new state with the prelude and `source` (named `name` in errors) loaded; throws with Lua's message on a syntax or load error. */
  static async create(prelude: string, source: string, name: string, host: HostFunctions): Promise<LuaState> {
    // Loaded only by a worker that runs a script: the others never pay for it.
    const module = await (loading ??= loadModule());
    const engine = await module.factory.createEngine({ injectObjects: false, enableProxy: false });
    const state = new LuaState(module, engine.global.address, host);
    state.registerHost();
    state.doString(prelude, 'prelude.lua');
    state.doString(source, name);
    state.c.lua_getglobal(state.L, state.name('__entry'));
    state.entryRef = state.c.luaL_ref(state.L, REGISTRY);
    return state;
  }

  /** Loads `source` as create() does (its top level runs), then frees the state: for checking a configuration. Throws what create() would. */
  static async check(prelude: string, source: string, name: string, host: HostFunctions): Promise<void> {
    const module = await (loading ??= loadModule());
    const engine = await module.factory.createEngine({ injectObjects: false, enableProxy: false });
    try {
      const state = new LuaState(module, engine.global.address, host);
      state.registerHost();
      state.doString(prelude, 'prelude.lua');
      state.doString(source, name);
    } finally {
      engine.global.close();
    }
  }

  /** Whether the script defines a global function of that name. */
  defines(global: string): boolean {
    const type = this.c.lua_getglobal(this.L, this.name(global));
    this.c.lua_settop(this.L, -2);
    return type === 6;
  }

  /**
   * Runs `__entry(kind, id)` in a coroutine: 'done' at once when it never waits; otherwise a
   * promise that settles when it ends ('stopped' when the host ended it, as respond() does).
   * A script error throws (or rejects) a LuaScriptError with Lua's message and traceback.
   */
  run(kind: number, id: number): 'done' | 'stopped' | Promise<'done' | 'stopped'> {
    const { c } = this;
    let thread = this.pool.pop();
    if (!thread) {
      const co = c.lua_newthread(this.L);
      thread = { co, ref: c.luaL_ref(this.L, REGISTRY) };
    }
    c.lua_rawgeti(thread.co, REGISTRY, BigInt(this.entryRef));
    c.lua_pushnumber(thread.co, kind);
    c.lua_pushnumber(thread.co, id);
    return this.step(thread, c.lua_resume(thread.co, this.L, 2, this.nresPtr));
  }

  private step(thread: { co: number; ref: number }, status: number): 'done' | 'stopped' | Promise<'done' | 'stopped'> {
    const { c } = this;
    const co = thread.co;
    if (status === LUA_OK) {
      c.lua_settop(co, 0);
      if (this.pool.length < 64) this.pool.push(thread);
      else c.luaL_unref(this.L, REGISTRY, thread.ref);
      return 'done';
    }
    if (status !== LUA_YIELD) {
      const err = this.error(co);
      c.luaL_unref(this.L, REGISTRY, thread.ref);
      throw err;
    }
    const top = c.lua_gettop(co);
    const args: LuaValue[] = [];
    for (let i = 2; i <= top; i++) args.push(this.read(co, i, true));
    const op = String(args.shift() ?? '');
    c.lua_settop(co, 0);
    return this.host.wait({ op, args }).then((result) => {
      if (result === 'stop') {
        // The coroutine is left suspended for good: it is not reused.
        c.luaL_unref(this.L, REGISTRY, thread.ref);
        return 'stopped';
      }
      let n: number;
      if ('error' in result) {
        c.lua_pushboolean(co, 0);
        this.pushText(co, result.error);
        n = 2;
      } else {
        c.lua_checkstack(co, result.values.length + 2);
        c.lua_pushboolean(co, 1);
        for (const v of result.values) this.push(co, v, true);
        n = result.values.length + 1;
      }
      return this.step(thread, c.lua_resume(co, this.L, n, this.nresPtr));
    });
  }

  private error(co: number): LuaScriptError {
    const { m, c } = this;
    const message = c.lua_type(co, -1) === T_STRING ? this.readText(co, -1)! : 'a script error that is not a string';
    const p = m.stringToNewUTF8(message);
    c.luaL_traceback(co, co, p, 1);
    c.free(p);
    const err = new LuaScriptError(message);
    err.stack = this.readText(co, -1) ?? message;
    c.lua_settop(co, 0);
    return err;
  }

  private registerHost(): void {
    const { m, c } = this;
    const self = this;
    const fn = m.addFunction((L: number) => {
      try {
        const count = c.lua_gettop(L) - 1;
        let pushed = 0;
        const args: ArgReader = {
          count,
          number: (i) => c.lua_tonumberx(L, i + 1, 0),
          bytes: (i) => self.readBytes(L, i + 1),
          text: (i) => self.readText(L, i + 1),
          value: (i) => self.read(L, i + 1, false),
        };
        const out: ResultWriter = {
          bytes: (s) => (pushed++, self.pushBytes(L, s)),
          text: (s) => (pushed++, self.pushText(L, s)),
          value: (v) => (pushed++, self.push(L, v, false)),
        };
        c.lua_checkstack(L, 8);
        self.host.call(c.lua_tonumberx(L, 1, 0), args, out);
        return pushed;
      } catch (err) {
        // A JS exception must become a Lua error, or it would unwind through Lua's frames.
        self.pushText(L, (err as Error).message ?? String(err));
        return c.lua_error(L);
      }
    }, 'ii');
    c.lua_pushcclosure(this.L, fn, 0);
    c.lua_setglobal(this.L, this.name('__host'));
  }

  private doString(source: string, chunk: string): void {
    const { m, c } = this;
    const code = this.encoder.encode(source);
    const p = c.malloc(code.length + 1);
    m.HEAPU8.set(code, p);
    let status = c.luaL_loadbufferx(this.L, p, code.length, this.name(`@${chunk}`), 0);
    c.free(p);
    if (status === LUA_OK) status = c.lua_pcallk(this.L, 0, 0, 0, 0, 0);
    if (status !== LUA_OK) {
      const message = this.readText(this.L, -1) ?? 'unknown error';
      c.lua_settop(this.L, -2);
      throw new LuaScriptError(message);
    }
  }

  /** A NUL-terminated copy of a name (globals, chunk names: a handful per state), kept for the state's life. */
  private name(s: string): number {
    let p = this.names.get(s);
    if (p === undefined) this.names.set(s, (p = this.m.stringToNewUTF8(s)));
    return p;
  }

  private bytesAt(L: number, i: number): Uint8Array | undefined {
    const p = this.c.lua_tolstring(L, i, this.lenPtr);
    if (!p) return undefined;
    return this.m.HEAPU8.subarray(p, p + this.m.HEAPU32[this.lenPtr >> 2]!);
  }

  private readBytes(L: number, i: number): string | undefined {
    const b = this.bytesAt(L, i);
    return b === undefined ? undefined : Buffer.from(b.buffer, b.byteOffset, b.length).toString('latin1');
  }

  private readText(L: number, i: number): string | undefined {
    const b = this.bytesAt(L, i);
    return b === undefined ? undefined : this.decoder.decode(b);
  }

  private ensureScratch(n: number): void {
    if (n <= this.scratchSize) return;
    this.c.free(this.scratch);
    this.scratchSize = Math.max(n, this.scratchSize * 2);
    this.scratch = this.c.malloc(this.scratchSize);
  }

  private pushBytes(L: number, s: string | undefined): void {
    if (s === undefined) return this.c.lua_pushnil(L);
    this.ensureScratch(s.length);
    const n = Buffer.from(this.m.HEAPU8.buffer, this.scratch, s.length).write(s, 'latin1');
    this.c.lua_pushlstring(L, this.scratch, n);
  }

  private pushText(L: number, s: string | undefined): void {
    if (s === undefined) return this.c.lua_pushnil(L);
    this.ensureScratch(s.length * 3);
    const n = this.encoder.encodeInto(s, this.m.HEAPU8.subarray(this.scratch, this.scratch + this.scratchSize)).written;
    this.c.lua_pushlstring(L, this.scratch, n);
  }

  /** A Lua value as JS; `bytes`: strings byte-preserving (they may be headers or bodies), else UTF-8. */
  private read(L: number, i: number, bytes: boolean, depth = 0): LuaValue {
    const { c } = this;
    switch (c.lua_type(L, i)) {
      case T_BOOLEAN:
        return c.lua_toboolean(L, i) !== 0;
      case T_NUMBER:
        return c.lua_tonumberx(L, i, 0);
      case T_STRING:
        return bytes ? this.readBytes(L, i) : this.readText(L, i);
      case T_TABLE: {
        if (depth > 16) return undefined;
        const t = i < 0 ? c.lua_gettop(L) + i + 1 : i;
        const out: Record<string, LuaValue> = {};
        c.lua_checkstack(L, 4);
        c.lua_pushnil(L);
        while (c.lua_next(L, t) !== 0) {
          const key = c.lua_type(L, -2) === T_NUMBER ? String(c.lua_tonumberx(L, -2, 0)) : c.lua_type(L, -2) === T_STRING ? this.readText(L, -2) : undefined;
          if (key !== undefined) out[key] = this.read(L, c.lua_gettop(L), bytes, depth + 1);
          c.lua_settop(L, -2);
        }
        const keys = Object.keys(out);
        return keys.length > 0 && keys.every((k, n) => k === String(n + 1)) ? keys.map((k) => out[k]!) : out;
      }
      default:
        return undefined;
    }
  }

  private push(L: number, v: LuaValue, bytes: boolean): void {
    const { c } = this;
    if (v === undefined || v === null) c.lua_pushnil(L);
    else if (typeof v === 'boolean') c.lua_pushboolean(L, v ? 1 : 0);
    else if (typeof v === 'number') c.lua_pushnumber(L, v);
    else if (typeof v === 'string') (bytes ? this.pushBytes(L, v) : this.pushText(L, v));
    else {
      c.lua_checkstack(L, 4);
      if (Array.isArray(v)) {
        c.lua_createtable(L, v.length, 0);
        v.forEach((item, n) => {
          c.lua_pushnumber(L, n + 1);
          this.push(L, item, bytes);
          c.lua_rawset(L, -3);
        });
      } else {
        c.lua_createtable(L, 0, 4);
        for (const k in v) {
          this.pushText(L, k);
          this.push(L, v[k], bytes);
          c.lua_rawset(L, -3);
        }
      }
    }
  }
}
