import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { FromWorker } from '../../../../ipc.js';
import { activeTap, startTap, stopTap, tapFactory } from './tap.js';
import { decode, encode } from '../../../../../test/helpers/filter-harness.js';

/**
 * envoy.filters.http.tap alone (Envoy's tap_filter_test): with no session it does nothing; with
 * one, the headers as they are at its place in the chain, the bodies as kept, and a trace for a
 * matching exchange when it ends.
 */

const NAME = 'envoy.filters.http.tap';
const factory = tapFactory(NAME, { common_config: { admin_config: { config_id: 'demo' } } });
const sent: FromWorker[] = [];
/** What was sent so far (a function: an assertion on `sent` would narrow its type for the rest of a test). */
const sentNow = (): FromWorker[] => sent;
// A worker sends its traces to its parent; here the parent is this test.
process.send = ((m: FromWorker) => {
  sent.push(m);
  return true;
}) as typeof process.send;
Object.defineProperty(process, 'connected', { value: true, configurable: true });

function session(id: number, config: object): void {
  startTap({ id, configId: 'demo', config: { output_config: { sinks: [{ streaming_admin: {}, format: 'JSON_BODY_AS_STRING' }] }, ...config } });
}

afterEach(() => {
  for (let id = 1; id <= 3; id++) stopTap(id);
  sent.length = 0;
});

describe('the tap filter', () => {
  it('does nothing without a session of its config id', async () => {
    assert.equal(activeTap('demo'), undefined);
    const run = await decode(factory, { headers: { 'x-tap': 'yes' } });
    assert.equal(run.decision, 'continue');
    encode(run, 200, { 'content-type': 'text/plain' });
    run.request.finish();
    assert.deepEqual(sent, []);
  });

  it('traces a matching exchange when it ends: the headers as they reach it, the bodies as kept', async () => {
    session(1, { match: { http_request_headers_match: { headers: [{ name: 'x-tap', string_match: { exact: 'yes' } }] } } });
    const run = await decode(factory, { method: 'POST', path: '/echo', headers: { 'x-tap': 'yes' }, body: 'hello', capture: { maxRequestBytes: 1024, maxResponseBytes: 3 } });
    // A filter after it changes the request: the trace keeps what the tap saw.
    run.request.rq.headers['x-later'] = 'added';
    encode(run, 201, { 'content-type': 'text/plain', 'x-up': ['a', 'b'] });
    run.request.sendResponseBody('world');
    assert.deepEqual(sent, [], 'nothing before the exchange ends');
    run.request.finish();
    assert.equal(sentNow().length, 1);
    const m = sentNow()[0];
    assert.ok(m?.type === 'tap_trace');
    assert.equal(m.sessionId, 1);
    const trace = (m.trace as { http_buffered_trace: Record<string, { headers: { key: string; value: string }[]; body?: unknown }> }).http_buffered_trace;
    const keys = (h: { key: string; value: string }[]) => h.map((e) => `${e.key}=${e.value}`);
    assert.deepEqual(keys(trace.request!.headers).slice(0, 4), [':authority=example.com', ':path=/echo', ':method=POST', ':scheme=http']);
    assert.ok(keys(trace.request!.headers).includes('x-tap=yes'));
    assert.ok(!keys(trace.request!.headers).includes('x-later=added'));
    assert.deepEqual(trace.request!.body, { as_string: 'hello', truncated: false });
    assert.deepEqual(keys(trace.response!.headers), [':status=201', 'content-type=text/plain', 'x-up=a', 'x-up=b']);
    assert.deepEqual(trace.response!.body, { as_string: 'wor', truncated: true });
  });

  it('leaves out an exchange its predicate does not match, and one whose session ended before it did', async () => {
    session(2, { match: { http_response_headers_match: { headers: [{ name: ':status', string_match: { exact: '500' } }] } } });
    const ok = await decode(factory);
    encode(ok, 200);
    ok.request.finish();
    assert.deepEqual(sent, []);
    const failed = await decode(factory);
    encode(failed, 500);
    stopTap(2);
    failed.request.finish();
    assert.deepEqual(sent, []);
  });
});
