import assert from 'node:assert/strict';
import type { Transform } from 'node:stream';
import { afterEach, describe, it } from 'node:test';
import type { MutableHeaders } from '../../../../header-mutation.js';
import { stats } from '../../../../stats/process.js';
import { grpcWebFactory } from './grpc-web.js';
import { counter, decode, encode, routesOf, through, type FakeRequest, type FakeRequestOptions, type FilterRun } from '../../../../../test/helpers/filter-harness.js';

/**
 * envoy.filters.http.grpc_web alone (Envoy's grpc_web_filter_test): the four gRPC-Web content
 * types become gRPC upstream (a -text body base64-decoded), the response comes back gRPC-Web
 * (binary, or base64 frames for a client that accepts -text) with the trailers as the body's
 * last frame, a response that is not gRPC turned into a gRPC status, the calls counted on the
 * route's cluster; anything else is left alone.
 */

const NAME = 'envoy.filters.http.grpc_web';
const f = grpcWebFactory(NAME);
const WEB_TYPES = ['application/grpc-web', 'application/grpc-web+proto', 'application/grpc-web-text', 'application/grpc-web-text+proto'];
const isText = (type: string) => type.startsWith('application/grpc-web-text');

// Envoy's figures: one binary message, one text message and its base64, the trailers' frame.
const MESSAGE = Buffer.from('\x00\x00\x00\x00\x11grpc-web-bin-data', 'latin1');
const TEXT_MESSAGE = Buffer.from('\x00\x00\x00\x00\x12grpc-web-text-data', 'latin1');
const B64_MESSAGE = 'AAAAABJncnBjLXdlYi10ZXh0LWRhdGE=';
const B64_MESSAGE_NO_PADDING = 'AAAAABJncnBjLXdlYi10ZXh0LWRhdGE';
const TRAILERS = Buffer.from('\x80\x00\x00\x00\x20grpc-status:0\r\ngrpc-message:ok\r\n', 'latin1');

const started: FakeRequest[] = [];
afterEach(() => {
  for (const r of started.splice(0)) for (const t of r.responseTransforms) t.destroy();
});

async function call(options: FakeRequestOptions): Promise<FilterRun> {
  const run = await decode(f, { method: 'POST', path: '/', ...options });
  started.push(run.request);
  return run;
}

/** The response body through the filter's transform, a byte at a time (as Envoy's test feeds it), then its end; all it put out. */
async function byteByByte(transform: Transform, input: Buffer): Promise<Buffer> {
  const out: Buffer[] = [];
  transform.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    transform.once('end', resolve);
    transform.once('error', reject);
  });
  for (const byte of input) transform.write(Buffer.from([byte]));
  transform.end();
  await ended;
  return Buffer.concat(out);
}

describe('the gRPC-Web filter', () => {
  it('sends each gRPC-Web content type upstream as gRPC: te trailers, a grpc-accept-encoding (the client’s kept), a binary body as it came', async () => {
    for (const type of WEB_TYPES) {
      const run = await call({ headers: { 'content-type': type } });
      const h = run.request.rq.headers;
      assert.deepEqual([run.decision, h['content-type'], h.te, h['grpc-accept-encoding']], ['continue', 'application/grpc', 'trailers', 'identity,deflate,gzip'], type);
    }
    const binary = await call({ headers: { 'content-type': 'application/grpc-web+proto' }, body: MESSAGE });
    assert.ok(binary.request.body?.equals(MESSAGE), 'the binary body goes on untouched');
    const own = await call({ headers: { 'content-type': 'application/grpc-web', 'grpc-accept-encoding': 'foo' } });
    assert.equal(own.request.rq.headers['grpc-accept-encoding'], 'foo');
  });

  it('decodes a -text body from base64 (one padded segment or several), and answers bad base64 400 with INTERNAL, as Envoy details it', async () => {
    for (const type of ['application/grpc-web-text', 'application/grpc-web-text+proto']) {
      const run = await call({ headers: { 'content-type': type }, body: B64_MESSAGE });
      assert.equal(run.decision, 'continue');
      assert.ok(run.request.body?.equals(TEXT_MESSAGE), `${type}: upstream gets the decoded message`);
      assert.equal(run.request.rq.headers['content-type'], 'application/grpc');
    }
    const two = await call({ headers: { 'content-type': 'application/grpc-web-text' }, body: B64_MESSAGE + MESSAGE.toString('base64') });
    assert.ok(two.request.body?.equals(Buffer.concat([TEXT_MESSAGE, MESSAGE])), 'segments decoded one after the other');

    for (const [body, details] of [[B64_MESSAGE_NO_PADDING, 'grpc_base_64_decode_failed_bad_size'], ['****', 'grpc_base_64_decode_failed']]) {
      const bad = await call({ headers: { 'content-type': 'application/grpc-web-text' }, body });
      assert.equal(bad.decision, 'stop');
      assert.equal(bad.request.details, details);
      const r = bad.request.replied;
      assert.deepEqual([r?.status, r?.headers['grpc-status'], r?.headers['grpc-message'], r?.headers['content-type']], [400, '13', 'Bad gRPC-web request, invalid base64 data.', 'application/grpc-web+proto']);
    }
    const textClient = await call({ headers: { 'content-type': 'application/grpc-web-text', accept: 'application/grpc-web-text' }, body: '****' });
    assert.equal(textClient.request.replied?.headers['content-type'], 'application/grpc-web-text+proto', 'the refusal in the form the client asked for');
  });

  it('answers a binary client gRPC-Web: the content type, no content-length, the message as it came, then the trailers as a 0x80 frame (none left as trailers)', async () => {
    for (const upstreamType of ['application/grpc', 'application/grpc-web+proto', 'application/grpc-web+proto; version=1']) {
      const run = await call({ headers: { 'content-type': 'application/grpc-web', accept: 'application/grpc-web' } });
      const headers = encode(run, 200, { 'content-type': upstreamType, 'content-length': '123' });
      assert.deepEqual([headers['content-type'], headers['content-length'], run.request.folded], ['application/grpc-web+proto', undefined, undefined], upstreamType);
      assert.equal(run.request.responseTransforms.length, 1);
      const trailers: MutableHeaders = { 'grpc-status': '0', 'grpc-message': 'ok' };
      run.filter.encodeTrailers!(trailers);
      assert.deepEqual(trailers, {}, 'the trailers go in the body');
      const out = await byteByByte(run.request.responseTransforms[0]!, MESSAGE);
      assert.ok(out.equals(Buffer.concat([MESSAGE, TRAILERS])), `${upstreamType}: ${JSON.stringify(out.toString('latin1'))}`);
    }
  });

  it('answers a client that accepts -text with base64: each whole frame encoded on its own, then the trailer frame', async () => {
    for (const accept of ['application/grpc-web-text', 'application/grpc-web-text+proto']) {
      const run = await call({ headers: { 'content-type': 'application/grpc-web-text+proto', accept } });
      const headers = encode(run, 200, { 'content-type': 'application/grpc-web+proto' });
      assert.equal(headers['content-type'], 'application/grpc-web-text+proto', accept);
      run.filter.encodeTrailers!({ 'grpc-status': '0', 'grpc-message': 'ok' });
      const out = (await byteByByte(run.request.responseTransforms[0]!, TEXT_MESSAGE)).toString('latin1');
      assert.ok(out.startsWith(B64_MESSAGE), out);
      assert.ok(Buffer.from(out.slice(B64_MESSAGE.length), 'base64').equals(TRAILERS), 'then the trailers, base64');
    }
    const two = await call({ headers: { 'content-type': 'application/grpc-web-text', accept: 'application/grpc-web-text' } });
    encode(two, 200, { 'content-type': 'application/grpc' });
    const out = await through(two.request.responseTransforms[0]!, Buffer.concat([MESSAGE, TEXT_MESSAGE]));
    assert.equal(out.toString('latin1'), MESSAGE.toString('base64') + B64_MESSAGE, 'two frames, two padded segments (no trailers came)');
  });

  it('turns a response that is not gRPC into a gRPC status: its HTTP status mapped, its body (up to 16 KiB) as grpc-message, no body', async () => {
    for (const [status, type] of [[400, 'text/plain'], [500, 'application/grpc-web+proto'], [200, 'application/grpc-web+json'], [503, undefined]] as [number, string | undefined][]) {
      const run = await call({ headers: { 'content-type': 'application/grpc-web-text' } });
      const headers = encode(run, status, { ...(type ? { 'content-type': type } : {}), 'content-length': '5' });
      assert.equal(headers['content-type'], 'application/grpc-web+proto', `${status} ${String(type)}`);
      assert.equal(headers['content-length'], undefined);
      assert.equal(run.request.responseTransforms.length, 0, 'no framing for it');
      assert.equal(run.request.folded?.limit, 16384, `${status} ${String(type)}: the body becomes headers`);
    }
    const run = await call({ headers: { 'content-type': 'application/grpc-web' } });
    encode(run, 400, { 'content-type': 'text/html' });
    const head: MutableHeaders = { 'content-type': 'application/grpc-web+proto' };
    run.request.folded!.fold(400, head, Buffer.from('hellohello'));
    assert.deepEqual([head['grpc-status'], head['grpc-message'], head['content-length']], ['13', 'hellohello', '0']);
    const trailers: MutableHeaders = { 'x-upstream': 'kept' };
    run.filter.encodeTrailers!(trailers);
    assert.deepEqual(trailers, { 'x-upstream': 'kept' }, 'no trailer frame for a response that has no body');

    const unavailable: MutableHeaders = {};
    run.request.folded!.fold(503, unavailable, Buffer.from('no healthy upstream'));
    assert.deepEqual([unavailable['grpc-status'], unavailable['grpc-message']], ['14', 'no healthy upstream']);
    const empty: MutableHeaders = {};
    run.request.folded!.fold(404, empty, Buffer.alloc(0));
    assert.deepEqual(empty, { 'content-length': '0' }, 'an empty body: nothing to say');

    const trailersOnly = await call({ headers: { 'content-type': 'application/grpc-web' } });
    const h = encode(trailersOnly, 200, { 'grpc-status': '7', 'grpc-message': 'not you' });
    assert.deepEqual([h['grpc-status'], h['content-type'], trailersOnly.request.folded, trailersOnly.request.responseTransforms.length], ['7', 'application/grpc-web+proto', undefined, 1], 'trailers-only: gRPC, its status in the headers');
  });

  it("counts each call on the route's cluster by service, method and status; none without a cluster", async () => {
    const stat = (cluster: string, name: string) => counter(`cluster.${cluster}.grpc-web.lyft.users.BadCompanions.GetBadCompanions.${name}`);
    const path = '/lyft.users.BadCompanions/GetBadCompanions';
    for (const type of WEB_TYPES) {
      const cluster = `gw-${isText(type) ? 'text' : 'bin'}-${type.endsWith('+proto') ? 'proto' : 'plain'}`;
      const routeConfig = routesOf([{ match: { prefix: '/' }, route: { cluster } }]);
      const ok = await call({ path, routeConfig, headers: { 'content-type': type } });
      encode(ok, 200, { 'content-type': 'application/grpc-web+proto' });
      ok.filter.encodeTrailers!({ 'grpc-status': '0' });
      const failed = await call({ path, routeConfig, headers: { 'content-type': type } });
      encode(failed, 200, { 'content-type': 'application/grpc-web+proto' });
      failed.filter.encodeTrailers!({ 'grpc-status': '1' });
      const denied = await call({ path, routeConfig, headers: { 'content-type': type } });
      encode(denied, 200, { 'grpc-status': '7' });
      assert.deepEqual(
        [stat(cluster, 'success'), stat(cluster, 'failure'), stat(cluster, 'total'), stat(cluster, '0'), stat(cluster, '1'), stat(cluster, '7')],
        [1, 2, 3, 1, 1, 1],
        type,
      );
    }
    // Neither a route without a cluster nor a path that names no method makes any stat.
    const before = stats.size;
    const noCluster = await call({ path, routeConfig: null, headers: { 'content-type': 'application/grpc-web' } });
    encode(noCluster, 200, { 'content-type': 'application/grpc' });
    noCluster.filter.encodeTrailers!({ 'grpc-status': '0' });
    const notAMethod = await call({ path: '/', routeConfig: routesOf([{ match: { prefix: '/' }, route: { cluster: 'gw-root' } }]), headers: { 'content-type': 'application/grpc-web' } });
    encode(notAMethod, 200, { 'grpc-status': '0' });
    notAMethod.filter.encodeTrailers!({ 'grpc-status': '0' });
    assert.equal(stats.size, before, 'no stat was made');
  });

  it('leaves alone a request that is not gRPC-Web (another content type, or none), and its response', async () => {
    for (const type of ['unsupported', 'application/grpc', 'application/grpc-web+json', 'application/json', undefined]) {
      const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
      const run = await call({ headers, body: 'payload' });
      assert.equal(run.decision, 'continue');
      assert.deepEqual([run.request.rq.headers['content-type'], run.request.rq.headers.te, run.request.rq.headers['grpc-accept-encoding']], [type, undefined, undefined], String(type));
      assert.equal(run.request.body?.toString(), 'payload');
      const response = encode(run, 200, { 'content-type': 'application/grpc', 'content-length': '7' });
      assert.deepEqual(response, { 'content-type': 'application/grpc', 'content-length': '7' });
      const trailers: MutableHeaders = { 'grpc-status': '0' };
      run.filter.encodeTrailers!(trailers);
      assert.deepEqual([trailers, run.request.responseTransforms.length, run.request.folded], [{ 'grpc-status': '0' }, 0, undefined]);
    }
  });
});
