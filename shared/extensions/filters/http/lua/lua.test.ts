import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { JsonObject } from '../../../../config/proto-json.js';
import { BreakerCounts, regionBytes } from '../../../../upstream/breaker-counts.js';
import type { FilterContext } from '../../../../http/filter-api.js';
import { luaFactory } from './lua.js';
import { ClusterManager } from '../../../../../worker/upstream/cluster-manager.js';
import { filterClusters } from '../../../../../worker/upstream/filter-clusters.js';
import { answeredBefore, counter, decode, encode, routesOf } from '../../../../../test/helpers/filter-harness.js';
import { waitFor } from '../../../../../test/helpers/proxy.js';

/**
 * envoy.filters.http.lua alone (Envoy's lua_filter_test and wrappers_test): the stream handle's
 * headers, respond(), body(), metadata and stream info, LuaPerRoute, and what a script error or a
 * refused call counts (http.<prefix>.lua.errors / .executions) — on the in-process WebAssembly Lua.
 */

const LUA = 'envoy.filters.http.lua';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.LuaPerRoute';

// No cluster at all: an httpCall() finds none (Envoy's "http call cluster invalid").
const layout = { capacity: 4, workers: 1 };
const clusters = new ClusterManager([], {}, { counts: new BreakerCounts(new ArrayBuffer(regionBytes(layout)), layout), worker: 0 }, {});
after(() => clusters.close());

const ctx = (statPrefix: string, extra: Partial<FilterContext> = {}): FilterContext => ({ statPrefix, localCluster: 'local', clusters: filterClusters(clusters), healthCheckFailing: () => false, ...extra });
const inline = (code: string): JsonObject => ({ default_source_code: { inline_string: code } });
const stats = (prefix: string) => [counter(`http.${prefix}.lua.executions`), counter(`http.${prefix}.lua.errors`)];

describe('the Lua filter', () => {
  it('reads and changes the request headers: add, get (case-insensitive), replace, remove, getNumValues, getAtIndex, a pseudo-header', async () => {
    const f = luaFactory(LUA, inline(`
      function envoy_on_request(handle)
        local h = handle:headers()
        h:add("HELLO", "WORLD")
        h:add("x-got-hello", h:get("hELLo"))
        h:replace("x-keep", "replaced")
        h:replace("x-new", "new_value")
        h:remove("x-drop")
        h:add("header3", "foo")
        h:add("header3", "bar")
        -- string.format, not tostring: this Lua 5.4 hands the count over as a float ("3.0"), LuaJIT as "3".
        h:add("x-num-multi", string.format("%d", h:getNumValues("X-Multi")))
        h:add("x-num-path", string.format("%d", h:getNumValues(":path")))
        h:add("x-num-none", string.format("%d", h:getNumValues("foobar")))
        h:add("x-at-1", h:getAtIndex("x-multi", 1))
        h:add("x-at-3", tostring(h:getAtIndex("x-multi", 3)))
        h:add("x-at-neg", tostring(h:getAtIndex("x-multi", -1)))
        h:add("x-method", h:get(":method"))
        h:replace(":path", "/new_path")
      end`), ctx('lua1'));
    const r = await decode(f, { method: 'POST', path: '/', headers: { 'x-keep': 'hello', 'x-drop': 'gone', 'x-multi': ['foo', 'bar', ''] } });
    assert.equal(r.decision, 'continue');
    const h = r.request.rq.headers;
    assert.deepEqual([h.hello, h['x-got-hello'], h['x-keep'], h['x-new'], h['x-drop'], h.header3], ['WORLD', 'WORLD', 'replaced', 'new_value', undefined, 'foo,bar']);
    // wrappers_test GetNumValues / GetAtIndex: 3 values (one empty), :path 1, absent 0; index 1 "bar", out of range and negative nil.
    assert.deepEqual([h['x-num-multi'], h['x-num-path'], h['x-num-none'], h['x-at-1'], h['x-at-3'], h['x-at-neg']], ['3', '1', '0', 'bar', 'nil', 'nil']);
    assert.deepEqual([h['x-method'], r.request.rq.path], ['POST', '/new_path']);
    assert.deepEqual(stats('lua1'), [1, 0]);
  });

  it('answers with respond(): the status, headers and body as a local reply, the rest of the script not run', async () => {
    const f = luaFactory(LUA, inline(`
      function envoy_on_request(handle)
        handle:respond({ [":status"] = "503", ["fake"] = "fakeValue", ["set-cookie"] = { "flavor=chocolate", "variant=chewy" } }, "nope")
        -- Should not run.
        local foo = nil
        foo["bar"] = "baz"
      end`), ctx('lua2'));
    const r = await decode(f);
    assert.equal(r.decision, 'stop');
    assert.deepEqual(r.request.replied, { status: 503, headers: { fake: 'fakeValue', 'set-cookie': ['flavor=chocolate', 'variant=chewy'] }, body: 'nope' });
    assert.equal(r.request.details, 'lua_response', "Envoy's response code details for a script's reply");
    assert.deepEqual(stats('lua2'), [1, 0], 'ImmediateResponseWithSendLocalReply: no error, one execution');
    // ImmediateResponseBadStatus: a :status outside 200-599 is a script error, and the request goes on.
    const bad = await decode(luaFactory(LUA, inline('function envoy_on_request(handle) handle:respond({ [":status"] = "100" }, "nope") end'), ctx('lua2b')));
    assert.deepEqual([bad.decision, bad.request.replied], ['continue', undefined]);
    assert.deepEqual(stats('lua2b'), [1, 1]);
  });

  it('counts a script error and lets the request go on with what the script did before it; a respond() without a valid :status and an httpCall() to no cluster are script errors too', async () => {
    const f = luaFactory(LUA, inline(`
      function envoy_on_request(handle)
        local h = handle:headers()
        h:add("x-before", "1")
        local what = h:get("x-what")
        if what == "status" then handle:respond({ [":status"] = "abc" }, "nope") end
        if what == "call" then handle:httpCall("cluster", { [":method"] = "GET", [":path"] = "/", [":authority"] = "foo" }, nil, 5000) end
        local foo = nil
        foo["bar"] = "baz"
      end`), ctx('lua3'));
    const r = await decode(f);
    assert.deepEqual([r.decision, r.request.replied, r.request.rq.headers['x-before']], ['continue', undefined, '1']);
    assert.deepEqual(stats('lua3'), [1, 1], 'ScriptErrorHeadersRequestBodyTrailers: errors 1, executions 1');
    for (const what of ['status', 'call']) {
      const bad = await decode(f, { headers: { 'x-what': what } });
      assert.deepEqual([bad.decision, bad.request.replied], ['continue', undefined], what);
    }
    assert.deepEqual(stats('lua3'), [3, 3]);
  });

  it('follows LuaPerRoute: a script of source_codes by name, a name not there runs nothing, disabled runs nothing, an inline source_code', async () => {
    const perRoute = (prefix: string, config: JsonObject) => ({ match: { prefix }, route: { cluster: 'backend' }, typed_per_filter_config: { [LUA]: { '@type': PER_ROUTE, ...config } } });
    const routeInfo = (which: string) => ({ inline_string: `function envoy_on_request(handle) handle:headers():add("route_info", "routed by ${which}") end` });
    const routeConfig = routesOf([
      perRoute('/two', { name: 'route_two.lua' }),
      perRoute('/missing', { name: 'route_three.lua' }),
      perRoute('/off', { disabled: true }),
      perRoute('/inline', { source_code: routeInfo('INLINE') }),
      { match: { prefix: '/' }, route: { cluster: 'backend' } },
    ]);
    const f = luaFactory(
      LUA,
      { ...inline('function envoy_on_request(handle) handle:headers():add("hello", "world") end'), source_codes: { 'route_one.lua': routeInfo('ROUTE_ONE'), 'route_two.lua': routeInfo('ROUTE_TWO') } },
      ctx('lua4'),
    );
    const seen = async (path: string) => {
      const h = (await decode(f, { path, routeConfig })).request.rq.headers;
      return [h.hello, h.route_info];
    };
    assert.deepEqual(await seen('/two'), [undefined, 'routed by ROUTE_TWO']);
    assert.deepEqual(await seen('/missing'), [undefined, undefined], 'LuaFilterRefSourceCodeNotExist');
    assert.deepEqual(await seen('/off'), [undefined, undefined], 'LuaFilterDisabled');
    assert.deepEqual(await seen('/inline'), [undefined, 'routed by INLINE']);
    assert.deepEqual(await seen('/other'), ['world', undefined]);
    assert.deepEqual(stats('lua4'), [3, 0]);
  });

  it('runs envoy_on_response on the response headers (:status too), counting a second execution; respond() there is a script error', async () => {
    const f = luaFactory(LUA, inline(`
      function envoy_on_request(handle) handle:headers():add("foo", "bar") end
      function envoy_on_response(handle)
        handle:headers():add("x-status", handle:headers():get(":status"))
        handle:headers():remove("server")
      end`), ctx('lua5'));
    const r = await decode(f);
    assert.equal(r.request.rq.headers.foo, 'bar');
    const headers = encode(r, 201, { server: 'upstream', 'x-up': '1' });
    assert.deepEqual(headers, { 'x-up': '1', 'x-status': '201' });
    r.request.finish();
    assert.deepEqual(stats('lua5'), [2, 0], 'RequestAndResponse: two executions');

    const responding = luaFactory(LUA, inline('function envoy_on_response(handle) handle:respond({ [":status"] = "200" }, "nope") end'), ctx('lua6'));
    const run = await decode(responding);
    assert.equal(run.decision, 'continue');
    assert.deepEqual(encode(run, 200, { 'x-up': '1' }), { 'x-up': '1' });
    await waitFor('the response-path error to be counted', () => counter('http.lua6.lua.errors') === 1, 5000);
    run.request.finish();
    assert.deepEqual([stats('lua6'), run.request.replied], [[1, 1], undefined], 'RespondInResponsePath: errors 1, executions 1');
  });

  it("runs envoy_on_response on an earlier filter's answer, which envoy_on_request never saw, as Envoy's filter manager encodes a local reply through every filter", async () => {
    const f = luaFactory(LUA, inline(`
      function envoy_on_request(handle) handle:headers():add("x-request", "seen") end
      function envoy_on_response(handle) handle:headers():add("x-answered", handle:headers():get(":status")) end`), ctx('lua12'));
    // A first request, which waits for the script to load (an answer going back cannot wait).
    (await decode(f)).request.finish();
    const run = answeredBefore(f);
    assert.equal(run.request.rq.headers['x-request'], undefined, 'envoy_on_request does not run');
    assert.deepEqual(encode(run, 403, { 'content-type': 'text/plain' }), { 'content-type': 'text/plain', 'x-answered': '403' });
    run.request.finish();
    assert.deepEqual(stats('lua12'), [2, 0], 'one execution for each request');
    const requestOnly = luaFactory(LUA, inline('function envoy_on_request(handle) handle:headers():add("a", "b") end'), ctx('lua13'));
    (await decode(requestOnly)).request.finish();
    assert.deepEqual(encode(answeredBefore(requestOnly), 403, {}), {});
    assert.deepEqual(stats('lua13'), [1, 0], 'a script without envoy_on_response does not run');
  });

  it('waits for the body and sends on what setBytes() set; a body past the buffer limit is answered 413', async () => {
    const script = inline(`
      function envoy_on_request(handle)
        local body = handle:body()
        if body == nil then handle:headers():add("x-body", "none") return end
        handle:headers():add("x-body-length", tostring(body:length()))
        body:setBytes(string.upper(body:getBytes(0, body:length())))
      end`);
    const f = luaFactory(LUA, script, ctx('lua7', { bufferLimit: 16 }));
    const r = await decode(f, { method: 'POST', body: 'hello' });
    assert.equal(r.decision, 'continue');
    assert.deepEqual([r.request.body?.toString(), r.request.rq.headers['x-body-length'], r.request.rq.headers['content-length']], ['HELLO', '5', '5']);
    assert.equal((await decode(f)).request.rq.headers['x-body'], 'none', 'ScriptBodyRequestHeadersOnly: no body is nil');
    const big = await decode(f, { method: 'POST', body: 'x'.repeat(17) });
    assert.deepEqual([big.decision, big.request.replied?.status, big.request.replied?.body, big.request.details], ['stop', 413, 'Payload Too Large', 'request_payload_too_large']);
    assert.deepEqual(stats('lua7'), [3, 0]);
  });

  it("reads the route's metadata under the filter's name before the canonical one, sets dynamic metadata, and reads stream info", async () => {
    const name = 'lua-filter-config-name';
    const f = luaFactory(name, inline(`
      function envoy_on_request(handle)
        local h = handle:headers()
        local entry = handle:metadata():get("foo.bar")
        h:add("x-name", entry and entry["name"] or "none")
        local info = handle:streamInfo()
        info:dynamicMetadata():set("envoy.lb", "foo", "bar")
        info:dynamicMetadata():set("envoy.lb", "complex", { x = "abcd", y = 1234 })
        h:add("x-complex", info:dynamicMetadata():get("envoy.lb")["complex"].x)
        h:add("x-protocol", info:protocol())
        h:add("x-local", info:downstreamLocalAddress())
        h:add("x-remote", info:downstreamDirectRemoteAddress())
        h:add("x-sni", info:requestedServerName())
        h:add("x-ssl", handle:connection():ssl() == nil and "plain" or "secure")
      end`), ctx('lua8'));
    const metadata = (scopes: Record<string, string>) => ({ filter_metadata: Object.fromEntries(Object.entries(scopes).map(([scope, n]) => [scope, { 'foo.bar': { name: n, prop: 'bar' } }])) });
    const routeConfig = routesOf([
      { match: { prefix: '/both' }, route: { cluster: 'backend' }, metadata: metadata({ [name]: 'foo', [LUA]: 'foo-xxx' }) },
      { match: { prefix: '/canonical' }, route: { cluster: 'backend' }, metadata: metadata({ [LUA]: 'foo-xxx' }) },
      { match: { prefix: '/' }, route: { cluster: 'backend' }, metadata: metadata({ 'envoy.some_filter': 'foo' }) },
    ]);
    const r = await decode(f, { path: '/both', routeConfig, connection: { serverName: 'foo.example.com', directRemoteIp: '8.8.8.8', directRemotePort: 3000 } });
    const h = r.request.rq.headers;
    assert.deepEqual([h['x-name'], h['x-complex'], h['x-protocol'], h['x-local'], h['x-remote'], h['x-sni'], h['x-ssl']], ['foo', 'abcd', 'HTTP/1.1', '127.0.0.1:10000', '8.8.8.8:3000', 'foo.example.com', 'plain']);
    assert.deepEqual(r.request.metadata(), { 'envoy.lb': { foo: 'bar', complex: { x: 'abcd', y: 1234 } } });
    assert.equal((await decode(f, { path: '/canonical', routeConfig })).request.rq.headers['x-name'], 'foo-xxx', 'GetMetadataFromHandleWithCanonicalName');
    assert.equal((await decode(f, { path: '/other', routeConfig })).request.rq.headers['x-name'], 'none', 'GetMetadataFromHandleNoLuaMetadata');
    assert.deepEqual(stats('lua8'), [3, 0]);
  });
});
