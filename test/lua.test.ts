import assert from 'node:assert/strict';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { filterBootstrap } from './helpers/bootstraps.js';
import { httpRequest, startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';
import { runProxy, tempDir } from './helpers/cli.js';

/** The Lua filter (envoy.filters.http.lua) as Envoy's: the stream handle API on real requests, per-route scripts, errors. */

const LUA = 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.LuaPerRoute';

const SCRIPT = `
function envoy_on_request(handle)
  local h = handle:headers()
  h:add("x-lua", "request " .. (h:get("x-in") or "none"))
  if h:get("x-boom") then error("boom") end
  if h:get("x-deny") then handle:respond({ [":status"] = "403", ["x-why"] = "lua" }, "denied by lua") end
  if h:get("x-call") then
    local rh, rb = handle:httpCall("backend", { [":method"] = "GET", [":path"] = "/status?code=201", [":authority"] = "backend" }, "", 2000)
    h:add("x-call-status", rh[":status"])
    h:add("x-call-body", rb)
  end
  if h:get(":method") == "POST" then
    local body = handle:body()
    h:add("x-body-length", tostring(body:length()))
    body:setBytes(string.upper(body:getBytes(0, body:length())))
  end
  local team = handle:metadata():get("team")
  if team then h:add("x-team", team) end
  h:add("x-protocol", handle:streamInfo():protocol())
  handle:streamInfo():dynamicMetadata():set("lua", "seen", "yes")
  handle:logInfo("hello from lua")
  h:replace(":path", "/echo")
end

function envoy_on_response(handle)
  handle:headers():add("x-lua-response", handle:headers():get(":status"))
end
`;

let upstream: Upstream;
let proxy: RunningProxy;

before(async () => {
  upstream = await startUpstream('A');
  const routes = [
    { match: { prefix: '/disabled' }, route: { cluster: 'backend', prefix_rewrite: '/echo' }, typed_per_filter_config: { 'envoy.filters.http.lua': { '@type': PER_ROUTE, disabled: true } } },
    { match: { prefix: '/named' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.lua': { '@type': PER_ROUTE, name: 'other' } } },
    { match: { prefix: '/' }, route: { cluster: 'backend' }, metadata: { filter_metadata: { 'envoy.filters.http.lua': { team: 'edge' } } } },
  ];
  const filter = {
    name: 'envoy.filters.http.lua',
    typed_config: {
      '@type': LUA,
      default_source_code: { inline_string: SCRIPT },
      source_codes: { other: { inline_string: 'function envoy_on_request(handle) handle:headers():replace(":path", "/echo"); handle:headers():add("x-other", "yes") end' } },
    },
  };
  proxy = await startProxy(filterBootstrap('scripted', [filter], routes, upstream.port), ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

interface Echoed {
  headers: Record<string, string>;
  body: string;
  url: string;
}
const send = (path: string, headers: Record<string, string> = {}, body?: string) =>
  httpRequest(`http://127.0.0.1:${proxy.ports.get('scripted')}${path}`, { headers, ...(body !== undefined ? { method: 'POST', body } : {}) });

describe('the Lua filter', () => {
  it("runs envoy_on_request with Envoy's handle: headers (pseudo-headers too), route metadata, stream info; and envoy_on_response", async () => {
    const r = await send('/anything', { 'x-in': 'hi' });
    assert.equal(r.status, 200);
    const up = JSON.parse(r.body) as Echoed;
    assert.deepEqual([up.url, up.headers['x-lua'], up.headers['x-team'], up.headers['x-protocol']], ['/echo', 'request hi', 'edge', 'HTTP/1.1']);
    assert.equal(r.headers['x-lua-response'], '200');
    assert.equal(await statValue(proxy, 'http.scripted.lua.executions'), 2);
  });

  it('waits for the body, and sends on what the script set', async () => {
    const up = JSON.parse((await send('/upload', {}, 'shout this')).body) as Echoed;
    assert.deepEqual([up.body, up.headers['x-body-length'], up.headers['content-length']], ['SHOUT THIS', '10', '10']);
  });

  it('waits for an httpCall to a cluster and gets its status and body', async () => {
    const up = JSON.parse((await send('/called', { 'x-call': '1' })).body) as Echoed;
    assert.deepEqual([up.headers['x-call-status'], up.headers['x-call-body']], ['201', 'A']);
  });

  it('lets many requests wait at once in one script, each resumed with its own answer', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => send('/called', { 'x-call': '1', 'x-in': String(i) })));
    results.forEach((r, i) => {
      const up = JSON.parse(r.body) as Echoed;
      assert.deepEqual([up.headers['x-call-status'], up.headers['x-lua']], ['201', `request ${i}`]);
    });
  });

  it('answers with respond(), and the request goes no further', async () => {
    const before = upstream.hits;
    const r = await send('/x', { 'x-deny': '1' });
    assert.deepEqual([r.status, r.body, r.headers['x-why']], [403, 'denied by lua', 'lua']);
    assert.equal(upstream.hits, before);
  });

  it('counts a script error and lets the request go on', async () => {
    const r = await send('/x', { 'x-boom': '1' });
    assert.equal(r.status, 200);
    assert.equal(await statValue(proxy, 'http.scripted.lua.errors'), 1);
  });

  it("follows LuaPerRoute: another of source_codes by name, or no script at all", async () => {
    const named = JSON.parse((await send('/named')).body) as Echoed;
    assert.deepEqual([named.headers['x-other'], named.headers['x-lua']], ['yes', undefined]);
    const off = JSON.parse((await send('/disabled')).body) as Echoed;
    assert.equal(off.headers['x-lua'], undefined);
  });
});

describe('Lua modules and load errors', () => {
  const tmp = tempDir('proxy-lua-');

  after(() => tmp.cleanup());

  it('require() finds a module relative to the working directory, as LuaJIT\'s package.path does (./?.lua), and ?/init.lua along a path the script adds', async () => {
    mkdirSync(join(tmp.dir, 'lib', 'pkg'), { recursive: true });
    writeFileSync(join(tmp.dir, 'lib', 'mylibrary.lua'), 'local M = {}\nfunction M.greet(name) return "hello " .. name end\nreturn M\n');
    writeFileSync(join(tmp.dir, 'lib', 'pkg', 'init.lua'), 'return { answer = 42 }\n');
    const script = `
package.path = package.path .. ";./lib/?/init.lua"
local mylib = require("lib.mylibrary")
local pkg = require("pkg")
function envoy_on_request(handle)
  handle:headers():add("x-greeting", mylib.greet("lua"))
  handle:headers():add("x-answer", tostring(pkg.answer))
  handle:headers():replace(":path", "/echo")
end`;
    const filter = { name: 'envoy.filters.http.lua', typed_config: { '@type': LUA, default_source_code: { inline_string: script } } };
    const p = await startProxy(filterBootstrap('modules', [filter], [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], upstream.port), ['--concurrency', '1'], {}, { cwd: tmp.dir });
    const r = await httpRequest(`http://127.0.0.1:${p.ports.get('modules')}/`);
    const seen = (JSON.parse(r.body) as Echoed).headers;
    assert.deepEqual([seen['x-greeting'], seen['x-answer']], ['hello lua', '42']);
    await p.stop();
  });

  it('refuses a configuration whose script does not load: a syntax error, a module that is not there', async () => {
    const config = (code: string) => {
      const filter = { name: 'envoy.filters.http.lua', typed_config: { '@type': LUA, inline_code: code } };
      return tmp.file(`lua-${Math.random().toString(36).slice(2)}.json`, JSON.stringify(filterBootstrap('broken', [filter], [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], 1)));
    };
    const syntax = await runProxy(['--mode', 'validate', '-c', config('function envoy_on_request(handle) handle:headers( end')], {}, 20_000);
    assert.equal(syntax.code, 1);
    assert.match(syntax.stderr, /http_filters\[0\]\.typed_config\.inline_code: script load error: .*expected/);
    const missing = await runProxy(['--mode', 'validate', '-c', config('local m = require("no.such.module")')], {}, 20_000);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /script load error: .*module 'no\.such\.module' not found:.*no file '\.\/no\/such\/module\.lua'/s);
  });

  it("refuses a route table from RDS whose per-route script does not load, keeping the version that serves, as Envoy refuses it", async () => {
    const rdsPath = join(tmp.dir, 'rds.yaml');
    const table = (version: string, code: string) =>
      JSON.stringify({
        version_info: version,
        resources: [{
          '@type': 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
          name: 'lua-routes',
          virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: { 'envoy.filters.http.lua': { '@type': PER_ROUTE, source_code: { inline_string: code } } } }] }],
        }],
      });
    let n = 0;
    const publish = (text: string) => {
      const next = join(tmp.dir, `.rds-${++n}.json`);
      writeFileSync(next, text);
      renameSync(next, rdsPath);
    };
    writeFileSync(rdsPath, table('1', 'function envoy_on_request(handle) handle:headers():add("x-version", "1") end'));
    const config = filterBootstrap('rds-lua', [{ name: 'envoy.filters.http.lua', typed_config: { '@type': LUA, default_source_code: { inline_string: '' } } }], [], upstream.port) as any;
    const hcm = config.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
    delete hcm.route_config;
    hcm.rds = { route_config_name: 'lua-routes', config_source: { path_config_source: { path: rdsPath }, resource_api_version: 'V3' } };
    const p = await startProxy(config, ['--concurrency', '1']);
    const seen = async () => (JSON.parse((await httpRequest(`http://127.0.0.1:${p.ports.get('rds-lua')}/echo`)).body) as Echoed).headers['x-version'];
    assert.equal(await seen(), '1');
    publish(table('2', 'function envoy_on_request(handle) handle:headers( end'));
    await waitFor('the refusal', async () => ((await statValue(p, 'http.rds-lua.rds.lua-routes.update_rejected')) === 1 ? true : undefined));
    assert.match(p.output(), /route configuration 'lua-routes': route configuration\.virtual_hosts\[0\]\.routes\[0\]\.typed_per_filter_config\.envoy\.filters\.http\.lua\.source_code: script load error/);
    assert.equal(await seen(), '1', 'version 1 serves on');
    await p.stop();
  });
});
