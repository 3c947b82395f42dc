import assert from 'node:assert/strict';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { minimalBootstrap, ROUTER_TYPE } from './helpers/bootstraps.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/** POST /tap with the HTTP tap filter, against a running proxy with two workers and traffic. */

const TAP_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.tap.v3.Tap';
let upstream: Upstream;
let proxy: RunningProxy;
let untapped: RunningProxy;
const url = (path: string) => `http://127.0.0.1:${proxy.ports.get('ingress')}${path}`;

function bootstrap(withTap: boolean): object {
  const d = minimalBootstrap() as Record<string, any>;
  d.admin.address.socket_address.port_value = 0;
  const hcm = d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
  d.static_resources.listeners[0].address.socket_address.port_value = 0;
  d.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = upstream.port;
  if (withTap) {
    hcm.http_filters = [
      { name: 'envoy.filters.http.tap', typed_config: { '@type': TAP_TYPE, common_config: { admin_config: { config_id: 'demo' } } } },
      { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } },
    ];
  }
  return d;
}

before(async () => {
  upstream = await startUpstream('A');
  proxy = await startProxy(bootstrap(true), ['--concurrency', '2']);
  untapped = await startProxy(bootstrap(false), ['--concurrency', '1']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

const tapPost = (body: string) => httpRequest(`http://${proxy.admin}/tap`, { method: 'POST', body, headers: { 'content-type': 'application/yaml' } });

/** Opens a tap stream; resolves once the session is on (the response headers are in). */
function openTap(body: object): Promise<{ req: ClientRequest; res: IncomingMessage; traces: () => Record<string, any>[]; text: () => string; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const req = request(`http://${proxy.admin}/tap`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.setEncoding('utf8');
      const ended = new Promise<void>((r) => res.once('end', () => r()));
      res.on('data', (d: string) => (text += d));
      res.on('error', () => {});
      // Each trace is a pretty-printed JSON object starting at the beginning of a line.
      const traces = () => text.split(/^(?=\{)/m).filter((s) => s.trim()).map((s) => JSON.parse(s) as Record<string, any>);
      resolve({ req, res, traces, text: () => text, ended });
    });
    req.on('error', (err) => (err.message === 'socket hang up' || (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
    req.end(JSON.stringify(body));
  });
}

const header = (m: { headers: { key: string; value: string }[] }, key: string) => m.headers.find((h) => h.key === key)?.value;

describe('/tap', () => {
  it('refuses what Envoy refuses, with its messages', async () => {
    assert.equal((await httpRequest(`http://${proxy.admin}/tap`)).status, 400, 'GET on a mutation');
    assert.deepEqual([(await tapPost('')).status, (await tapPost('')).body], [400, '/tap requires a JSON/YAML body']);
    const unknown = await tapPost('config_id: nope\ntap_config: {match: {any_match: true}, output_config: {sinks: [{streaming_admin: {}}]}}\n');
    assert.deepEqual([unknown.status, unknown.body], [400, "Unknown config id 'nope'. No extension has registered with this id."]);
    const badField = await tapPost('config_id: demo\ntap_config: {match: {any_match: true}, output_config: {sinks: [{file_per_tap: {path_prefix: trace}}]}}\n');
    assert.equal(badField.status, 400);
    assert.match(badField.body, /tap_config\.output_config\.sinks\[0\]\.file_per_tap: field 'file_per_tap' of envoy\.config\.tap\.v3\.OutputSink is not supported/);
    const noMatch = await tapPost('config_id: demo\ntap_config: {output_config: {sinks: [{streaming_admin: {}}]}}\n');
    assert.deepEqual([noMatch.status, noMatch.body], [400, 'Neither match nor match_config is set in TapConfig']);
    const typo = await tapPost('config_id: demo\ntap_config: {mtach: {any_match: true}}\n');
    assert.equal(typo.status, 400);
    assert.match(typo.body, /mtach/);
  });

  it('streams a trace of each matching exchange, headers and bodies, from every worker', async () => {
    const tap = await openTap({
      config_id: 'demo',
      tap_config: {
        match: { http_request_headers_match: { headers: [{ name: 'x-tap', string_match: { exact: 'yes' } }] } },
        output_config: { sinks: [{ format: 'JSON_BODY_AS_STRING', streaming_admin: {} }] },
      },
    });
    assert.equal(tap.res.statusCode, 200);
    const second = await tapPost('config_id: demo\ntap_config: {match: {any_match: true}, output_config: {sinks: [{streaming_admin: {}}]}}\n');
    assert.deepEqual([second.status, second.body], [400, 'An attached /tap admin stream already exists. Detach it.']);

    for (let i = 0; i < 6; i++) {
      await httpRequest(url(`/echo?n=${i}`), { method: 'POST', body: `hello ${i}`, headers: { 'x-tap': 'yes' } });
      await httpRequest(url('/echo'), { headers: { 'x-tap': 'no' } });
    }
    const traces = await waitFor('six traces', () => (tap.traces().length >= 6 ? tap.traces() : undefined));
    // A pause that proves an absence: no trace for the unmatched exchanges arrives after the six.
    // (A sentinel would not do: two workers' traces may overtake one another.)
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(tap.traces().length, 6, 'only the matching exchanges are traced');
    const trace = traces.find((t) => header(t.http_buffered_trace.request, ':path') === '/echo?n=0')!.http_buffered_trace;
    assert.equal(header(trace.request, ':method'), 'POST');
    assert.equal(header(trace.request, 'x-tap'), 'yes');
    assert.ok(header(trace.request, 'x-request-id'), 'the headers as the filters saw them');
    assert.deepEqual(trace.request.body, { as_string: 'hello 0', truncated: false });
    assert.deepEqual(trace.request.trailers, []);
    assert.equal(header(trace.response, ':status'), '200');
    assert.equal(JSON.parse(trace.response.body.as_string).body, 'hello 0');
    assert.match(tap.text(), /^\{\n "http_buffered_trace": \{\n  "request": \{\n   "headers": \[/, "Envoy's pretty JSON");

    tap.req.destroy();
    // Detached: the next request gets past the one-session check (and fails on its empty body).
    await waitFor('the session to detach', async () => ((await tapPost('')).body === '/tap requires a JSON/YAML body' || undefined));
  });

  it('buffered_admin returns max_traces traces and ends; bodies are capped and base64 by default', async () => {
    const tap = await openTap({
      config_id: 'demo',
      tap_config: {
        match: {
          and_match: { rules: [
            { http_response_headers_match: { headers: [{ name: ':status', string_match: { exact: '200' } }] } },
            { http_response_headers_match: { headers: [{ name: 'content-type', string_match: { exact: 'application/json' } }] } },
          ] },
        },
        output_config: { sinks: [{ buffered_admin: { max_traces: 2 } }], max_buffered_tx_bytes: 4 },
      },
    });
    await httpRequest(url('/')); // 200 text/plain: no match
    await httpRequest(url('/status?code=404'));
    for (let i = 0; i < 3; i++) await httpRequest(url('/echo'));
    await tap.ended;
    const traces = tap.traces();
    assert.equal(traces.length, 2);
    const response = traces[0]!.http_buffered_trace.response;
    assert.equal(header(response, ':status'), '200');
    assert.deepEqual(response.body, { as_bytes: Buffer.from('{"na').toString('base64'), truncated: true });
  });

  it('does not exist without a tap filter', async () => {
    assert.equal((await httpRequest(`http://${untapped.admin}/tap`, { method: 'POST', body: 'config_id: x' })).status, 404);
  });
});
