// The upstream HTTP/1.1 connection (worker/upstream/http1-connection.ts) against scripted servers:
// what it writes, how it reads what servers answer (framing, trailers, 1xx, HEAD, a response read
// until close), when it keeps the connection and when not, and how failures are told apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { Http1Connection } from '../worker/upstream/http1-connection.js';
import type { UpstreamHandler, UpstreamRequest } from '../worker/upstream/upstream-handler.js';

interface Outcome {
  status?: number;
  headers?: IncomingHttpHeaders;
  body: string;
  trailers?: IncomingHttpHeaders;
  error?: Error & { code?: string };
}

/** A raw TCP server: each accepted socket gets `answer`, which sees every chunk it reads. */
async function rawServer(answer: (socket: Socket, chunk: Buffer, all: string) => void): Promise<{ server: Server; port: number; sockets: Socket[]; received: string[] }> {
  const sockets: Socket[] = [];
  const received: string[] = [];
  const server = createServer((socket) => {
    const index = sockets.push(socket) - 1;
    received[index] = '';
    socket.on('data', (chunk) => {
      received[index] += chunk.toString('latin1');
      answer(socket, chunk, received[index]!);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, sockets, received };
}

function stop(server: Server, sockets: Socket[]): Promise<void> {
  for (const s of sockets) s.destroy();
  return new Promise((r) => server.close(() => r()));
}

interface Harness {
  connection: Http1Connection;
  idle: number;
  closed: Promise<void>;
  limits: string[];
  failed: boolean[];
}

function connectTo(port: number, limits: { idleMs?: number } = {}): Harness {
  let closedResolve!: () => void;
  const h = { idle: 0, limits: [] as string[], failed: [] as boolean[], closed: new Promise<void>((r) => (closedResolve = r)) } as Harness;
  h.connection = new Http1Connection(
    { ip: '127.0.0.1', port, address: `127.0.0.1:${port}`, connectTimeoutMs: 1000, idleMs: limits.idleMs ?? 0, maxConnectionMs: 0 },
    {
      connectionOpened() {},
      connectionClosed() {},
      connectionFailed: (timedOut) => h.failed.push(timedOut ?? false),
      limitReached: (limit) => h.limits.push(limit),
    },
    { idle: () => h.idle++, closed: () => closedResolve() },
  );
  return h;
}

/** Sends one request and collects what its handler is told. */
function exchange(h: Harness, request: Partial<UpstreamRequest>, onStart?: UpstreamHandler['onResponseStart']): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { body: '' };
    h.connection.send({ method: 'GET', path: '/', headers: ['host', 'upstream'], body: null, ...request }, {
      onResponseStart: (c, status, headers, message) => {
        out.status = status;
        out.headers = headers;
        onStart?.(c, status, headers, message);
      },
      onResponseData: (_c, chunk) => (out.body += chunk.toString('latin1')),
      onResponseEnd: (_c, trailers) => resolve({ ...out, trailers }),
      onResponseError: (_c, error) => resolve({ ...out, error }),
    }, false);
  });
}

test('keeps the connection for the next request, and reads more than 32 header fields and repeated ones', async () => {
  const extra = Array.from({ length: 40 }, (_, i) => `x-field-${i}: ${i}\r\n`).join('');
  const { server, port, sockets } = await rawServer((socket, _chunk, all) => {
    if (all.endsWith('\r\n\r\n')) socket.write(`HTTP/1.1 200 OK\r\n${extra}Set-Cookie: a=1\r\nset-cookie: b=2\r\ncontent-length: 2\r\n\r\nok`);
  });
  const h = connectTo(port);
  const first = await exchange(h, {});
  assert.equal(first.status, 200);
  assert.equal(first.body, 'ok');
  assert.equal(first.headers!['x-field-39'], '39');
  assert.deepEqual(first.headers!['set-cookie'], ['a=1', 'b=2']);
  assert.equal(h.idle, 1);
  const second = await exchange(h, { path: '/again' });
  assert.equal(second.body, 'ok');
  assert.equal(sockets.length, 1, 'one connection carried both');
  h.connection.retire();
  await h.closed;
  await stop(server, sockets);
});

test('header names reach the handler in lower case, also past the 512 names kept lower-cased', async () => {
  const names = Array.from({ length: 600 }, (_, i) => `X-Mixed-Case-${i}`);
  const { server, port, sockets } = await rawServer((socket, _chunk, all) => {
    if (all.endsWith('\r\n\r\n')) socket.write(`HTTP/1.1 200 OK\r\n${names.map((n, i) => `${n}: ${i}\r\n`).join('')}Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nok`);
  });
  const h = connectTo(port);
  for (let round = 0; round < 2; round++) {
    const r = await exchange(h, {});
    assert.equal(r.headers!['content-type'], 'text/plain');
    for (let i = 0; i < names.length; i++) assert.equal(r.headers![`x-mixed-case-${i}`], String(i), names[i]);
    assert.equal(Object.keys(r.headers!).some((k) => k !== k.toLowerCase()), false);
  }
  h.connection.retire();
  await h.closed;
  await stop(server, sockets);
});

test('a chunked response with trailers; a 100 Continue is not the response; a response to HEAD has no body', async () => {
  const { server, port, sockets } = await rawServer((socket, _chunk, all) => {
    if (!all.endsWith('\r\n\r\n')) return;
    if (all.startsWith('HEAD')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n');
    else socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\ngrpc-status: 0\r\n\r\n');
  });
  const h = connectTo(port);
  const chunked = await exchange(h, {});
  assert.equal(chunked.status, 200);
  assert.equal(chunked.body, 'abcde');
  assert.deepEqual(chunked.trailers, { 'grpc-status': '0' });
  const head = await exchange(h, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  assert.equal(head.error, undefined);
  assert.equal(h.idle, 2, 'the connection was kept after each');
  h.connection.retire();
  await h.closed;
  await stop(server, sockets);
});

test('a response read until the server closes ends with the close; one cut short fails as a reset, not a protocol error', async () => {
  const { server, port, sockets } = await rawServer((socket, _chunk, all) => {
    if (!all.endsWith('\r\n\r\n')) return;
    if (all.includes('/whole')) socket.end('HTTP/1.1 200 OK\r\n\r\nuntil close');
    else socket.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf');
  });
  const whole = await exchange(connectTo(port), { path: '/whole' });
  assert.equal(whole.error, undefined);
  assert.equal(whole.body, 'until close');
  const cut = await exchange(connectTo(port), { path: '/cut' });
  assert.equal(cut.status, 200);
  assert.equal(cut.error?.code, 'ECONNRESET');
  assert.notEqual(cut.error?.name, 'HTTPParserError');
  await stop(server, sockets);
});

test("a response head up to Envoy's 80 KiB is read; a larger one fails as a protocol error", async () => {
  const field = (kb: number) => `x-large: ${'a'.repeat(kb * 1024)}\r\n`;
  const { server, port, sockets } = await rawServer((socket, _chunk, all) => {
    if (!all.endsWith('\r\n\r\n')) return;
    socket.write(`HTTP/1.1 200 OK\r\n${field(all.includes('/huge') ? 90 : 40)}content-length: 2\r\n\r\nok`);
  });
  const large = await exchange(connectTo(port), { path: '/large' });
  assert.equal(large.error, undefined);
  assert.equal((large.headers!['x-large'] as string).length, 40 * 1024);
  const huge = await exchange(connectTo(port), { path: '/huge' });
  assert.equal(huge.error?.name, 'HTTPParserError');
  assert.equal(huge.error?.code, 'HPE_HEADER_OVERFLOW');
  await stop(server, sockets);
});

test('bytes that are not HTTP fail as a protocol error', async () => {
  const { server, port, sockets } = await rawServer((socket) => socket.write('SSH-2.0-OpenSSH\r\n\r\n'));
  const out = await exchange(connectTo(port), {});
  assert.equal(out.error?.name, 'HTTPParserError');
  assert.match(out.error?.code ?? '', /^HPE_/);
  await stop(server, sockets);
});

test('request bodies: a stream of unknown length goes chunked, a buffer with its length, a POST without one says content-length: 0', async () => {
  const seen: { method: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, headers: req.headers, body });
      res.end('done');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const h = connectTo(port);
  await exchange(h, { method: 'POST', body: Readable.from([Buffer.from('one,'), Buffer.from('two')]) });
  await exchange(h, { method: 'PUT', body: Buffer.from('buffered') });
  await exchange(h, { method: 'POST' });
  assert.equal(seen[0]!.headers['transfer-encoding'], 'chunked');
  assert.equal(seen[0]!.body, 'one,two');
  assert.equal(seen[1]!.headers['content-length'], '8');
  assert.equal(seen[1]!.body, 'buffered');
  assert.equal(seen[2]!.headers['content-length'], '0');
  assert.equal(h.idle, 3);
  h.connection.retire();
  await h.closed;
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

test('a header value that would split the request is refused before a byte is written, and the connection stays usable', async () => {
  const { server, port, sockets, received } = await rawServer((socket, _chunk, all) => {
    if (all.endsWith('\r\n\r\n')) socket.write('HTTP/1.1 204 No Content\r\n\r\n');
  });
  const h = connectTo(port);
  await exchange(h, {}); // connected and idle
  const before = received[0];
  const refused = await exchange(h, { headers: ['host', 'upstream', 'x-evil', 'a\r\nGET /smuggled HTTP/1.1'] });
  assert.match(refused.error?.message ?? '', /invalid value of header 'x-evil'/);
  assert.equal(received[0], before, 'nothing was written');
  const after = await exchange(h, {});
  assert.equal(after.status, 204);
  h.connection.retire();
  await h.closed;
  await stop(server, sockets);
});

test("a server's Keep-Alive timeout hint shortens the idle timeout; connection: close ends the connection after the response", async () => {
  const { server, port, sockets } = await rawServer((socket, _chunk, all) => {
    if (!all.endsWith('\r\n\r\n')) return;
    if (all.includes('/hint')) socket.write('HTTP/1.1 200 OK\r\nkeep-alive: timeout=2\r\ncontent-length: 0\r\n\r\n');
    else socket.write('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  const hinted = connectTo(port, { idleMs: 60_000 });
  await exchange(hinted, { path: '/hint' });
  await hinted.closed; // after the hint less a second, not the 60 s idle_timeout
  assert.deepEqual(hinted.limits, ['idle_timeout']);
  const closing = connectTo(port);
  const out = await exchange(closing, { path: '/close' });
  assert.equal(out.status, 200);
  await closing.closed;
  assert.equal(closing.idle, 0, 'never offered for another request');
  await stop(server, sockets);
});

test('aborting a request under way closes its connection and reports the reason; a refused connection fails as a connect failure', async () => {
  const { server, port, sockets } = await rawServer((socket, _chunk, all) => {
    if (all.endsWith('\r\n\r\n')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nfirst part');
  });
  const h = connectTo(port);
  const reason = new Error('route timeout');
  const out = await exchange(h, {}, (c) => setImmediate(() => c.abort(reason)));
  assert.equal(out.error, reason);
  await h.closed;
  await stop(server, sockets);
  const refused = connectTo(port);
  const failed = await exchange(refused, {});
  assert.equal(failed.error?.code, 'ECONNREFUSED');
  assert.deepEqual(refused.failed, [false]);
});

test('a body that comes in several reads is passed on as each read ends, and its last piece comes with the end to a handler that takes both', async () => {
  let socketOf: Socket | undefined;
  const { server, port, sockets } = await rawServer((socket, _chunk, all) => {
    socketOf = socket;
    if (all.endsWith('\r\n\r\n')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nfirst');
  });
  const h = connectTo(port);
  const told: string[] = [];
  let firstPiece!: () => void;
  const firstArrived = new Promise<void>((r) => (firstPiece = r));
  const ended = new Promise<IncomingHttpHeaders>((resolve) => {
    h.connection.send({ method: 'GET', path: '/', headers: ['host', 'upstream'], body: null }, {
      onResponseData: (_c, chunk) => {
        told.push(`data ${chunk.toString('latin1')}`);
        firstPiece();
      },
      onResponseLastData: (_c, chunk, trailers) => {
        told.push(`last ${chunk.toString('latin1')}`);
        resolve(trailers);
      },
      onResponseEnd: (_c, trailers) => {
        told.push('end without data');
        resolve(trailers);
      },
    }, false);
  });
  // The second half is sent only once the first reached the handler: nothing waits for the end.
  await firstArrived;
  socketOf!.write('-last');
  await ended;
  assert.deepEqual(told, ['data first', 'last -last']);
  await stop(server, sockets);
});

test('without onResponseLastData, a response read whole is given as data then end; a chunked one keeps its trailers', async () => {
  const { server, port, sockets } = await rawServer((socket, _chunk, all) => {
    if (all.endsWith('\r\n\r\n')) socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ntrailer: x-check\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nx-check: ok\r\n\r\n');
  });
  const h = connectTo(port);
  const out = await exchange(h, {});
  assert.equal(out.body, 'abcde');
  assert.equal(out.trailers?.['x-check'], 'ok');
  await stop(server, sockets);
});
