import { readFileSync } from 'node:fs';
import { obj } from '../config/access.js';
import { readDataSource } from '../config/data-source.js';
import type { JsonObject } from '../config/proto-json.js';
import { HostOp, PRELUDE } from './prelude.js';
import { LuaState, type HostFunctions } from './wasm-lua.js';
import { configError, type ConfigError } from '../config/config-error.js';

/**
 * Envoy compiles and runs each Lua script's top level when it loads the configuration, and
 * refuses the configuration when that fails (a syntax error, a require() of a module that is not
 * there, an error raised at load): "script load error". This does the same for every Lua filter
 * (and LuaPerRoute source_code) of a bootstrap, in a Lua state like a worker's (the same prelude,
 * so require() finds the same files), before anything is served.
 */

const LUA = 'envoy.extensions.filters.http.lua.v3.Lua';
const LUA_PER_ROUTE = 'envoy.extensions.filters.http.lua.v3.LuaPerRoute';

interface Script {
  path: string;
  source: string;
}

const text = (ds: unknown) => (readDataSource(obj(ds)) ?? Buffer.alloc(0)).toString('utf8');

/** Every script of every Lua configuration under `root` (a bootstrap, a listener), with where it is. */
function scriptsIn(root: unknown, path: string, out: Script[]): Script[] {
  if (Array.isArray(root)) root.forEach((v, i) => scriptsIn(v, `${path}[${i}]`, out));
  else if (root !== null && typeof root === 'object') {
    const o = root as JsonObject;
    const type = String(o['@type'] ?? '').replace(/^.*\//, '');
    if (type === LUA) {
      if (o.default_source_code !== undefined) out.push({ path: `${path}.default_source_code`, source: text(o.default_source_code) });
      else if (typeof o.inline_code === 'string' && o.inline_code) out.push({ path: `${path}.inline_code`, source: o.inline_code });
      for (const [name, ds] of Object.entries(obj(o.source_codes))) out.push({ path: `${path}.source_codes.${name}`, source: text(ds) });
    } else if (type === LUA_PER_ROUTE && o.source_code !== undefined) out.push({ path: `${path}.source_code`, source: text(o.source_code) });
    for (const [k, v] of Object.entries(o)) if (typeof v === 'object') scriptsIn(v, `${path}.${k}`, out);
  }
  return out;
}

/** A module's source for require(), by path (relative to the working directory, as LuaJIT opens it); undefined when there is no such file. */
export function readModule(path: string): string | undefined {
  try {
    return readFileSync(path).toString('latin1');
  } catch {
    return undefined;
  }
}

/** What a script's top level may ask of its host: require()'s files, nothing of a request. */
const loadHost: HostFunctions = {
  call(op, args, out) {
    if (op !== HostOp.readModule) throw new Error('there is no request while the script loads');
    out.bytes(readModule(args.text(1) ?? ''));
  },
  wait: async () => ({ error: 'there is no request while the script loads' }),
};

/** The configuration's script load errors (none: every script loads). Only a configuration with Lua pays for the interpreter. */
export async function luaLoadErrors(root: unknown, path: string): Promise<ConfigError[]> {
  const scripts = scriptsIn(root, path, []);
  const errors: ConfigError[] = [];
  for (const s of scripts) {
    try {
      await LuaState.check(PRELUDE, s.source, s.path, loadHost);
    } catch (err) {
      errors.push(configError('load_failed', s.path, `script load error: ${(err as Error).message}`));
    }
  }
  return errors;
}
