import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { headerToMetadataFactory } from './header-to-metadata.js';
import { answeredBefore, decode, encode, routesOf } from '../../../../../test/helpers/filter-harness.js';

/** envoy.filters.http.header_to_metadata alone (Envoy's header_to_metadata_filter_test): what is written, where, and what is not. */

const NAME = 'envoy.filters.http.header_to_metadata';
const CONFIG = 'type.googleapis.com/envoy.extensions.filters.http.header_to_metadata.v3.Config';
const factory = (config: object) => headerToMetadataFactory(NAME, config as Record<string, unknown>);
const meta = (run: Awaited<ReturnType<typeof decode>>, ns = NAME) => run.request.metadata()[ns];

describe('the header-to-metadata filter', () => {
  it('writes a present header as a string, under the filter\'s name unless the rule names a namespace, and removes it when told', async () => {
    const f = factory({
      request_rules: [
        { header: 'x-version', on_header_present: { key: 'version' }, remove: true },
        { header: 'x-team', on_header_present: { metadata_namespace: 'envoy.lb', key: 'team' } },
      ],
    });
    const r = await decode(f, { headers: { 'x-version': '0xdeadbeef', 'x-team': 'edge' } });
    assert.deepEqual(meta(r), { version: '0xdeadbeef' });
    assert.deepEqual(meta(r, 'envoy.lb'), { team: 'edge' });
    assert.equal(r.request.rq.headers['x-version'], undefined, 'removed');
    assert.equal(r.request.rq.headers['x-team'], 'edge');
  });

  it('writes the fixed value of on_header_present / on_header_missing, and nothing for an empty result', async () => {
    const f = factory({ request_rules: [{ header: 'x-canary', on_header_present: { key: 'canary', value: 'yes' }, on_header_missing: { key: 'canary', value: 'no' } }] });
    assert.deepEqual(meta(await decode(f, { headers: { 'x-canary': 'anything' } })), { canary: 'yes' });
    assert.deepEqual(meta(await decode(f)), { canary: 'no' });
    const rewrite = factory({ request_rules: [{ header: 'x-path', on_header_present: { key: 'p', regex_value_rewrite: { pattern: { regex: '^/(\\w+)/.*$' }, substitution: '\\1' } } }] });
    assert.deepEqual(meta(await decode(rewrite, { headers: { 'x-path': '/api/v1' } })), { p: 'api' });
    assert.equal(meta(await decode(factory({ request_rules: [{ header: 'x-empty', on_header_present: { key: 'e' } }] }), { headers: { 'x-empty': '' } })), undefined, 'an empty value is not written');
  });

  it('NUMBER: a number is written as one, anything else not at all', async () => {
    const f = factory({ request_rules: [{ header: 'x-n', on_header_present: { key: 'n', type: 'NUMBER' } }] });
    assert.deepEqual(meta(await decode(f, { headers: { 'x-n': ' 1.5e2 ' } })), { n: 150 });
    for (const bad of ['0x10', 'abc', '1,2', ' ']) assert.equal(meta(await decode(f, { headers: { 'x-n': bad } })), undefined, JSON.stringify(bad));
  });

  it('BASE64: decoded first (padding optional); what does not decode is not written', async () => {
    const f = factory({ request_rules: [{ header: 'x-b', on_header_present: { key: 'b', encode: 'BASE64' } }] });
    assert.deepEqual(meta(await decode(f, { headers: { 'x-b': Buffer.from('hello').toString('base64') } })), { b: 'hello' });
    assert.deepEqual(meta(await decode(f, { headers: { 'x-b': 'aGVsbG8' } })), { b: 'hello' }, 'without padding');
    assert.equal(meta(await decode(f, { headers: { 'x-b': 'not base64!' } })), undefined);
  });

  it('a value of 8 KiB or more is not written', async () => {
    const f = factory({ request_rules: [{ header: 'x-big', on_header_present: { key: 'big' } }] });
    assert.equal(meta(await decode(f, { headers: { 'x-big': 'a'.repeat(8192) } })), undefined);
    assert.deepEqual(meta(await decode(f, { headers: { 'x-big': 'a'.repeat(8191) } })), { big: 'a'.repeat(8191) });
  });

  it('reads a cookie, response headers on the way back, and takes a route\'s rules instead of the filter\'s', async () => {
    const cookie = factory({ request_rules: [{ cookie: 'session', on_header_present: { key: 'session' } }] });
    assert.deepEqual(meta(await decode(cookie, { headers: { cookie: 'a=1; session="s-42"; b=2' } })), { session: 's-42' });
    const response = factory({ response_rules: [{ header: 'x-served-by', on_header_present: { key: 'server' }, remove: true }] });
    const run = await decode(response);
    const headers = encode(run, 200, { 'x-served-by': 'pod-7' });
    assert.deepEqual([meta(run), headers['x-served-by']], [{ server: 'pod-7' }, undefined]);
    const filter = factory({ request_rules: [{ header: 'x-a', on_header_present: { key: 'from', value: 'filter' } }] });
    const routeConfig = routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: { [NAME]: { '@type': CONFIG, request_rules: [{ header: 'x-a', on_header_present: { key: 'from', value: 'route' } }] } } }]);
    assert.deepEqual(meta(await decode(filter, { headers: { 'x-a': '1' }, routeConfig })), { from: 'route' });
  });

  it("applies the response rules to an earlier filter's answer, which its request rules never saw", () => {
    const f = factory({ request_rules: [{ header: 'x-a', on_header_present: { key: 'a' } }], response_rules: [{ header: 'x-reason', on_header_present: { key: 'reason' } }] });
    const run = answeredBefore(f, { headers: { 'x-a': '1' } });
    encode(run, 429, { 'x-reason': 'limited' });
    assert.deepEqual(meta(run), { reason: 'limited' });
  });
});
