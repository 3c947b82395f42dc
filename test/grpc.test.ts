import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, credentials, Metadata, Server, ServerCredentials, status as GrpcStatus, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData } from '@grpc/grpc-js';
import { filterBootstrap, staticCluster } from './helpers/bootstraps.js';
import { startProxy, statValue, stopAllProxies, type RunningProxy } from './helpers/proxy.js';

/**
 * gRPC through the proxy (HTTP/2 both sides, the status in the trailers), gRPC local replies, and
 * envoy.filters.http.grpc_web, against a real gRPC server (@grpc/grpc-js) and real clients: a
 * grpc-js client, and HTTP/1.1 requests framed as a browser's gRPC-Web library frames them.
 *
 * The service carries raw bytes (no protobuf needed): Echo/Say answers `hello <request>`, or
 * fails with NOT_FOUND for `missing` (status in trailers after headers) and PERMISSION_DENIED for
 * `deny` before any message (trailers-only); Echo/Count streams `1`, `2`, `3`.
 */

const raw = { serialize: (b: Buffer) => b, deserialize: (b: Buffer) => b };
const SAY = '/test.Echo/Say';
const COUNT = '/test.Echo/Count';
const H2 = { typed_extension_protocol_options: { 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions', explicit_http_config: { http2_protocol_options: {} } } } };
const GRPC_WEB = { name: 'envoy.filters.http.grpc_web', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.grpc_web.v3.GrpcWeb' } };

let server: Server;
let serverPort = 0;
let proxy: RunningProxy;
let port = 0;

before(async () => {
  server = new Server();
  server.addService(
    {
      Say: { path: SAY, requestStream: false, responseStream: false, requestSerialize: raw.serialize, requestDeserialize: raw.deserialize, responseSerialize: raw.serialize, responseDeserialize: raw.deserialize },
      Count: { path: COUNT, requestStream: false, responseStream: true, requestSerialize: raw.serialize, requestDeserialize: raw.deserialize, responseSerialize: raw.serialize, responseDeserialize: raw.deserialize },
    } as never,
    {
      Say: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
        const text = call.request.toString();
        if (text === 'deny') callback({ code: GrpcStatus.PERMISSION_DENIED, details: 'not you' });
        else if (text === 'missing') {
          call.sendMetadata(new Metadata());
          callback({ code: GrpcStatus.NOT_FOUND, details: 'no such thing: ü%' });
        } else callback(null, Buffer.from(`hello ${text}`));
      },
      Count: (call: ServerWritableStream<Buffer, Buffer>) => {
        for (const n of ['1', '2', '3']) call.write(Buffer.from(n));
        call.end();
      },
    },
  );
  serverPort = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  const bootstrap = filterBootstrap('grpc_in', [GRPC_WEB], [
    { match: { prefix: '/test.Echo/' }, route: { cluster: 'grpc', timeout: '5s' } },
    { match: { prefix: '/down.Service/' }, route: { cluster: 'empty' } },
  ], 1);
  const clusters = (bootstrap.static_resources as { clusters: object[] }).clusters;
  clusters.push({ ...staticCluster('grpc', serverPort), ...H2 }, { ...staticCluster('empty', []), ...H2 });
  proxy = await startProxy(bootstrap, ['--concurrency', '1']);
  port = proxy.ports.get('grpc_in')!;
});

after(async () => {
  await stopAllProxies();
  server.forceShutdown();
});

describe('gRPC through the proxy', () => {
  let client: Client;
  before(() => {
    client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  });
  after(() => client.close());

  const unary = (method: string, text: string) =>
    new Promise<{ err: { code: number; details: string } | null; reply?: string }>((resolve) =>
      client.makeUnaryRequest<Buffer, Buffer>(method, raw.serialize, raw.deserialize, Buffer.from(text), (err, reply) => resolve({ err: err ? { code: err.code, details: err.details } : null, ...(reply ? { reply: reply.toString() } : {}) })),
    );

  it('carries a unary call and its OK status (in the trailers) both ways', async () => {
    assert.deepEqual(await unary(SAY, 'world'), { err: null, reply: 'hello world' });
  });

  it("passes a failure's status and message from the trailers, and from a trailers-only answer", async () => {
    assert.deepEqual((await unary(SAY, 'missing')).err, { code: GrpcStatus.NOT_FOUND, details: 'no such thing: ü%' });
    assert.deepEqual((await unary(SAY, 'deny')).err, { code: GrpcStatus.PERMISSION_DENIED, details: 'not you' });
  });

  it('streams a server-streaming call to its end', async () => {
    const call = client.makeServerStreamRequest<Buffer, Buffer>(COUNT, raw.serialize, raw.deserialize, Buffer.from(''));
    const got: string[] = [];
    for await (const m of call) got.push((m as Buffer).toString());
    assert.deepEqual(got, ['1', '2', '3']);
  });

  it("answers a gRPC client's local reply as gRPC: 200 with grpc-status (UNAVAILABLE for a 503) and the text as grpc-message", async () => {
    const { err } = await unary('/down.Service/Call', 'x');
    assert.deepEqual(err, { code: GrpcStatus.UNAVAILABLE, details: 'no healthy upstream' });
    assert.deepEqual((await unary('/nowhere/At', 'x')).err?.code, GrpcStatus.UNIMPLEMENTED, 'a 404 (no route) is UNIMPLEMENTED');
  });
});

/** A gRPC-Web body: each message as a data frame (flag 0, length, bytes). */
function frames(...messages: string[]): Buffer {
  return Buffer.concat(messages.map((m) => {
    const b = Buffer.from(m);
    const head = Buffer.alloc(5);
    head.writeUInt32BE(b.length, 1);
    return Buffer.concat([head, b]);
  }));
}

/** A gRPC-Web response body read back: its messages and its trailer frame's lines. */
function unframe(body: Buffer): { messages: string[]; trailers: Record<string, string> } {
  const messages: string[] = [];
  const trailers: Record<string, string> = {};
  let at = 0;
  while (at + 5 <= body.length) {
    const flag = body[at]!;
    const size = body.readUInt32BE(at + 1);
    const payload = body.subarray(at + 5, at + 5 + size).toString();
    if (flag & 0x80) for (const line of payload.split('\r\n').filter(Boolean)) trailers[line.slice(0, line.indexOf(':'))] = line.slice(line.indexOf(':') + 1);
    else messages.push(payload);
    at += 5 + size;
  }
  assert.equal(at, body.length, 'the body is whole frames');
  return { messages, trailers };
}

/** Text mode: padded base64 segments, each decoded on its own. */
function fromText(text: string): Buffer {
  return Buffer.concat(text.split(/(?<==)(?=[^=])/).map((s) => Buffer.from(s, 'base64')));
}

describe('envoy.filters.http.grpc_web', () => {
  /** A browser's gRPC-Web call (fetch, HTTP/1.1): the status, headers and body bytes. */
  const web = async (path: string, body: Buffer | string, headers: Record<string, string> = {}) => {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1', ...headers }, body });
    return { status: r.status, headers: Object.fromEntries(r.headers), rawBody: Buffer.from(await r.arrayBuffer()) };
  };

  it('turns a gRPC-Web call over HTTP/1.1 into gRPC and its answer back: the message, then the trailers as a trailer frame', async () => {
    const r = await web(SAY, frames('browser'));
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/grpc-web+proto');
    const { messages, trailers } = unframe(r.rawBody!);
    assert.deepEqual(messages, ['hello browser']);
    assert.equal(trailers['grpc-status'], '0');
  });

  it('gives a failure in the trailer frame, and a trailers-only failure in the headers', async () => {
    const missing = unframe((await web(SAY, frames('missing'))).rawBody!);
    // The server's own encoding of the message goes through as it is.
    assert.deepEqual([missing.messages, missing.trailers['grpc-status'], decodeURIComponent(missing.trailers['grpc-message']!)], [[], '5', 'no such thing: ü%']);
    const denied = await web(SAY, frames('deny'));
    assert.deepEqual([denied.status, denied.headers['grpc-status'], decodeURIComponent(denied.headers['grpc-message']!), denied.rawBody!.length], [200, '7', 'not you', 0]);
  });

  it('speaks grpc-web-text both ways: the request decoded, each frame of the answer base64-encoded', async () => {
    const r = await web(COUNT, frames('').toString('base64'), { 'content-type': 'application/grpc-web-text', accept: 'application/grpc-web-text' });
    assert.equal(r.headers['content-type'], 'application/grpc-web-text+proto');
    const { messages, trailers } = unframe(fromText(r.rawBody!.toString('latin1')));
    assert.deepEqual([messages, trailers['grpc-status']], [['1', '2', '3'], '0']);
  });

  it("answers bad base64 400 with gRPC's INTERNAL, and makes a non-gRPC answer (a 503 from the proxy) a gRPC status with its body as grpc-message", async () => {
    const bad = await web(SAY, 'abc', { 'content-type': 'application/grpc-web-text' });
    assert.deepEqual([bad.status, bad.headers['grpc-status'], bad.headers['grpc-message']], [400, '13', 'Bad gRPC-web request, invalid base64 data.']);
    const down = await web('/down.Service/Call', frames('x'));
    assert.deepEqual([down.status, down.headers['grpc-status'], down.headers['grpc-message'], down.headers['content-length'], down.rawBody!.length], [503, '14', 'no healthy upstream', '0', 0]);
  });

  it("counts each call under the route's cluster, by service, method and status, as Envoy's gRPC stats", async () => {
    assert.equal(await statValue(proxy, 'cluster.grpc.grpc-web.test.Echo.Say.0'), 1);
    assert.equal(await statValue(proxy, 'cluster.grpc.grpc-web.test.Echo.Say.5'), 1);
    assert.equal(await statValue(proxy, 'cluster.grpc.grpc-web.test.Echo.Say.failure'), 2);
    assert.equal(await statValue(proxy, 'cluster.grpc.grpc-web.test.Echo.Count.success'), 1);
    assert.equal(await statValue(proxy, 'cluster.grpc.grpc-web.test.Echo.Say.total'), 3);
  });
});
