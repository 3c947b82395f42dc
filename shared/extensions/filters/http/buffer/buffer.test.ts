import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject } from '../../../../config/proto-json.js';
import { bufferFactory } from './buffer.js';
import { counter, decode, routesOf } from '../../../../../test/helpers/filter-harness.js';

/**
 * envoy.filters.http.buffer alone (Envoy's buffer_filter_test): a request without a body goes on
 * at once, one with a body goes on whole, one over max_request_bytes is answered 413; a route's
 * (or its virtual host's) BufferPerRoute sets another limit or switches the filter off, the most
 * specific one winning.
 */

const NAME = 'envoy.filters.http.buffer';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.BufferPerRoute';
const perRoute = (config: JsonObject) => ({ [NAME]: { '@type': PER_ROUTE, ...config } });
const tooLarge = (prefix: string) => counter(`http.${prefix}.downstream_rq_too_large`);

describe('the buffer filter', () => {
  it('lets a request without a body go on at once, and one with a body go on whole, as it came', async () => {
    const f = bufferFactory(NAME, { max_request_bytes: 1024 * 1024 }, 'buf1');
    const headersOnly = await decode(f, { method: 'GET' });
    assert.deepEqual([headersOnly.decision, headersOnly.request.replied, headersOnly.request.body], ['continue', undefined, undefined]);
    const withBody = await decode(f, { method: 'POST', body: 'hello world' });
    assert.deepEqual([withBody.decision, withBody.request.replied], ['continue', undefined]);
    assert.equal(withBody.request.body?.toString(), 'hello world');
    assert.equal(withBody.request.rq.headers['content-length'], '11');
    assert.equal(tooLarge('buf1'), 0);
  });

  it('answers 413 Payload Too Large to a body over max_request_bytes (and takes one of exactly that size), counting downstream_rq_too_large', async () => {
    const f = bufferFactory(NAME, { max_request_bytes: 16 }, 'buf2');
    const exact = await decode(f, { method: 'POST', body: 'x'.repeat(16) });
    assert.deepEqual([exact.decision, exact.request.replied, exact.request.body?.length], ['continue', undefined, 16]);
    const over = await decode(f, { method: 'POST', body: 'x'.repeat(17) });
    assert.equal(over.decision, 'stop');
    assert.deepEqual([over.request.replied?.status, over.request.replied?.body], [413, 'Payload Too Large']);
    assert.equal(over.request.details, 'request_payload_too_large');
    assert.equal(tooLarge('buf2'), 1);
  });

  it('stops without an answer when the client goes away before its body has come', async () => {
    const f = bufferFactory(NAME, { max_request_bytes: 16 }, 'buf3');
    const gone = await decode(f, { method: 'POST', body: 'partial', aborted: true });
    assert.deepEqual([gone.decision, gone.request.replied, tooLarge('buf3')], ['stop', undefined, 0]);
  });

  it("takes the route's BufferPerRoute limit over the filter's, and over its virtual host's disabled", async () => {
    const f = bufferFactory(NAME, { max_request_bytes: 16 }, 'buf4');
    const routeConfig = routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend' }, typed_per_filter_config: perRoute({ buffer: { max_request_bytes: 123 } }) }], {
      typed_per_filter_config: perRoute({ disabled: true }),
    });
    const fits = await decode(f, { method: 'POST', body: 'y'.repeat(123), routeConfig });
    assert.deepEqual([fits.decision, fits.request.replied, fits.request.body?.length], ['continue', undefined, 123], 'over the filter’s 16, within the route’s 123');
    const over = await decode(f, { method: 'POST', body: 'y'.repeat(124), routeConfig });
    assert.deepEqual([over.decision, over.request.replied?.status], ['stop', 413], 'the route’s limit, not the virtual host’s disabled');
    assert.equal(tooLarge('buf4'), 1);
  });

  it("takes the virtual host's BufferPerRoute when the route has none: its limit, or switched off there", async () => {
    const f = bufferFactory(NAME, { max_request_bytes: 16 }, 'buf5');
    const limited = routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend' } }], { typed_per_filter_config: perRoute({ buffer: { max_request_bytes: 789 } }) });
    assert.equal((await decode(f, { method: 'POST', body: 'z'.repeat(789), routeConfig: limited })).decision, 'continue');
    assert.equal((await decode(f, { method: 'POST', body: 'z'.repeat(790), routeConfig: limited })).request.replied?.status, 413);

    const disabled = routesOf([{ match: { prefix: '/' }, route: { cluster: 'backend' } }], { typed_per_filter_config: perRoute({ disabled: true }) });
    const through = await decode(f, { method: 'POST', body: 'z'.repeat(1000), routeConfig: disabled });
    assert.deepEqual([through.decision, through.request.replied], ['continue', undefined], 'switched off: no limit at all');
    assert.equal(tooLarge('buf5'), 1);
  });

  it('applies the route’s setting only to requests of that route', async () => {
    const f = bufferFactory(NAME, { max_request_bytes: 16 }, 'buf6');
    const routeConfig = routesOf([
      { match: { prefix: '/streamed' }, route: { cluster: 'backend' }, typed_per_filter_config: perRoute({ disabled: true }) },
      { match: { prefix: '/large' }, route: { cluster: 'backend' }, typed_per_filter_config: perRoute({ buffer: { max_request_bytes: 1000 } }) },
      { match: { prefix: '/' }, route: { cluster: 'backend' } },
    ]);
    const body = 'w'.repeat(500);
    const results = [];
    for (const path of ['/streamed/a', '/large/a', '/other']) results.push((await decode(f, { method: 'POST', path, body, routeConfig })).request.replied?.status);
    assert.deepEqual(results, [undefined, undefined, 413]);
    assert.equal(tooLarge('buf6'), 1);
  });
});
