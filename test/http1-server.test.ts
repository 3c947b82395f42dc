// The downstream HTTP/1.1 server (worker/http1/server.ts) with real clients: framing and the
// connection's fate as node:http's server had them, requests served in order, the body read with
// back-pressure, a client that leaves, a request that is not HTTP/1.1, the timeouts, an upgrade,
// one write per response written in one turn, and a response's back-pressure on a client that does
// not read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, Agent } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Http1Server, type Http1ServerHandlers, type Http1ServerOptions } from '../worker/http1/server.js';
import type { Http1Request } from '../worker/http1/request.js';
import type { Http1Response } from '../worker/http1/response.js';
import { waitFor } from './helpers/proxy.js';

interface Harness {
  port: number;
  server: Http1Server;
  sockets: Socket[];
  errors: string[];
  upgrades: { req: Http1Request; head: string; socket: Socket }[];
  close(): Promise<void>;
}

async function serve(onRequest: (req: Http1Request, res: Http1Response) => void, options: Partial<Http1ServerOptions> = {}): Promise<Harness> {
  const errors: string[] = [];
  const upgrades: Harness['upgrades'] = [];
  const sockets: Socket[] = [];
  const handlers: Http1ServerHandlers = {
    request: onRequest,
    upgrade: (req, socket, head) => upgrades.push({ req, head: head.toString('latin1'), socket }),
    clientError: (err, socket) => {
      errors.push(err.code ?? 'none');
      if (socket.writable) socket.end(`HTTP/1.1 ${err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400} X\r\ncontent-length: 0\r\n\r\n`);
      else socket.destroy();
    },
  };
  const server = new Http1Server({ maxHeaderSize: 16384, requestTimeoutMs: 0, headersTimeoutMs: 0, keepAliveTimeoutMs: 5000, checkIntervalMs: 50, ...options }, handlers);
  const listener: Server = createServer({ pauseOnConnect: true }, (socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
    server.connection(socket);
    socket.resume();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  return {
    port: (listener.address() as AddressInfo).port,
    server,
    sockets,
    errors,
    upgrades,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => listener.close(() => r()));
    },
  };
}

/** Writes raw bytes and collects what comes back until the server closes, or until `until` matches. */
function raw(port: number, bytes: string, until?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const s = connect(port, '127.0.0.1', () => s.write(bytes));
    s.on('data', (d) => {
      out += d.toString('latin1');
      if (until?.test(out)) {
        s.destroy();
        resolve(out);
      }
    });
    s.on('error', reject);
    s.on('close', () => resolve(out));
  });
}

function get(port: number, path: string, agent: Agent, method = 'GET'): Promise<{ status: number; headers: Record<string, unknown>; body: string; socketPort: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, agent }, (res) => {
      let body = '';
      res.setEncoding('latin1');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, socketPort: req.socket!.localPort! }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('keep-alive: one connection serves several requests, with node:http\'s Connection, Keep-Alive, Date and Content-Length', async () => {
  const h = await serve((req, res) => res.end(`you asked ${req.url}`));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const a = await get(h.port, '/a', agent);
    const b = await get(h.port, '/b', agent);
    assert.equal(a.body, 'you asked /a');
    assert.equal(b.body, 'you asked /b');
    assert.equal(a.socketPort, b.socketPort, 'the second request reused the connection');
    assert.equal(a.headers.connection, 'keep-alive');
    assert.equal(a.headers['keep-alive'], 'timeout=5');
    assert.equal(a.headers['content-length'], String('you asked /a'.length));
    assert.ok(typeof a.headers.date === 'string' && !Number.isNaN(Date.parse(a.headers.date)));
    assert.equal(h.sockets.length, 1);
  } finally {
    agent.destroy();
    await h.close();
  }
});

test('pipelined requests are answered in order, one at a time', async () => {
  const order: string[] = [];
  let active = 0;
  const h = await serve((req, res) => {
    active++;
    order.push(`${req.url} active=${active}`);
    // The first answers last if they ran at once.
    setTimeout(() => {
      active--;
      res.end(req.url);
    }, req.url === '/1' ? 30 : 1);
  });
  try {
    const out = await raw(h.port, 'GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const bodies = [...out.matchAll(/\r\n\r\n(\/\d)/g)].map((m) => m[1]);
    assert.deepEqual(bodies, ['/1', '/2', '/3']);
    assert.deepEqual(order, ['/1 active=1', '/2 active=1', '/3 active=1']);
    assert.match(out, /Connection: close\r\n/, 'the last, which asked for it, closes');
  } finally {
    await h.close();
  }
});

test('a response written in one turn goes out in one write of one buffer', async () => {
  // Counted at the socket's handle, where every write goes, through the socket's Writable or past it (direct-write.ts).
  const writes: string[] = [];
  const h = await serve((req, res) => {
    const handle = (req.socket as unknown as { _handle: Record<string, (...a: unknown[]) => number> })._handle;
    for (const method of ['writeBuffer', 'writev', 'writeLatin1String', 'writeUtf8String', 'writeAsciiString', 'writeUcs2String']) {
      const write = handle[method]!.bind(handle);
      handle[method] = (...a: unknown[]) => {
        writes.push(method);
        return write(...a);
      };
    }
    res.writeHead(200, ['content-type', 'text/plain', 'content-length', '10']);
    res.write('hello');
    res.end('world');
  });
  try {
    const out = await raw(h.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(out, /^HTTP\/1\.1 200 OK\r\ncontent-type: text\/plain\r\ncontent-length: 10\r\n/);
    assert.ok(out.endsWith('\r\n\r\nhelloworld'), out);
    assert.deepEqual(writes, ['writeBuffer']);
  } finally {
    await h.close();
  }
});

test("a client that does not read: write() says to wait once the socket holds enough, 'drain' follows its reading, and every byte arrives", async () => {
  const piece = Buffer.alloc(32 * 1024, 'y');
  const pieces = 256; // 8 MB: more than the kernel's buffers hold for a client that does not read
  let refusals = 0;
  let drains = 0;
  let sent = 0;
  let serverSocket: Socket | undefined;
  const h = await serve((req, res) => {
    serverSocket = req.socket;
    res.writeHead(200, ['content-length', String(piece.length * pieces)]);
    const more = () => {
      while (sent < pieces) {
        sent++;
        if (sent === pieces) {
          res.end(piece);
          return;
        }
        if (!res.write(piece)) {
          refusals++;
          res.once('drain', () => {
            drains++;
            more();
          });
          return;
        }
      }
    };
    more();
  });
  try {
    const client = connect(h.port, '127.0.0.1');
    client.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    client.pause();
    // The kernel's buffers fill: the response waits for a drain, with the rest queued at the socket.
    await waitFor('the response to wait with bytes queued', () => (refusals > drains && serverSocket !== undefined && serverSocket.writableLength > 0 ? true : undefined));
    assert.ok(sent < pieces, 'the server stopped writing');
    let bytes = 0;
    const done = new Promise<void>((resolve) => client.on('end', resolve));
    client.on('data', (d: Buffer) => (bytes += d.length));
    client.resume();
    await done;
    assert.ok(bytes > piece.length * pieces, 'the head and the whole body arrived');
    assert.equal(drains, refusals, 'each wait ended with a drain');
  } finally {
    await h.close();
  }
});

test('chunked when the length is unknown, with trailers; nothing after HEAD, 204 or 304', async () => {
  const h = await serve((req, res) => {
    if (req.url === '/chunked') {
      res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-checksum' });
      res.write('ab');
      setImmediate(() => {
        res.addTrailers({ 'x-checksum': '42' });
        res.end('cd');
      });
      return;
    }
    if (req.url === '/204') {
      res.writeHead(204);
      res.end('dropped');
      return;
    }
    res.end('body of a GET');
  });
  try {
    const chunked = await raw(h.port, 'GET /chunked HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(chunked, /Transfer-Encoding: chunked\r\n/);
    assert.ok(chunked.endsWith('\r\n\r\n2\r\nab\r\n2\r\ncd\r\n0\r\nx-checksum: 42\r\n\r\n'), JSON.stringify(chunked));
    const head = await raw(h.port, 'HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.ok(head.startsWith('HTTP/1.1 200 OK\r\n') && head.endsWith('\r\n\r\n'), 'HEAD gets no body');
    const empty = await raw(h.port, 'GET /204 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.ok(empty.startsWith('HTTP/1.1 204 No Content\r\n') && empty.endsWith('\r\n\r\n'), JSON.stringify(empty));
  } finally {
    await h.close();
  }
});

test('HTTP/1.0: no chunking, the connection closes after the body', async () => {
  const h = await serve((_req, res) => {
    res.writeHead(200);
    res.write('one ');
    res.end('two');
  });
  try {
    const out = await raw(h.port, 'GET / HTTP/1.0\r\n\r\n');
    assert.match(out, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(out, /Connection: close\r\n/);
    assert.doesNotMatch(out, /Transfer-Encoding/);
    assert.ok(out.endsWith('\r\n\r\none two'), JSON.stringify(out));
  } finally {
    await h.close();
  }
});

test('Expect: 100-continue is answered first; another expectation is 417; an HTTP/1.1 request without Host is 400', async () => {
  const seen: string[] = [];
  const h = await serve((req, res) => {
    seen.push(req.url);
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => res.end(`got ${Buffer.concat(chunks).toString()}`));
  });
  try {
    const cont = await raw(h.port, 'POST /c HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi');
    assert.match(cont, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    assert.ok(cont.endsWith('got hi'));
    const refused = await raw(h.port, 'GET /e HTTP/1.1\r\nHost: x\r\nExpect: something\r\n\r\n', /\r\n\r\n/);
    assert.match(refused, /^HTTP\/1\.1 417 Expectation Failed\r\n/);
    const hostless = await raw(h.port, 'GET /h HTTP/1.1\r\n\r\n');
    assert.match(hostless, /^HTTP\/1\.1 400 Bad Request\r\nConnection: close\r\n/);
    assert.deepEqual(seen, ['/c'], 'only the request that expected 100-continue reached the handler');
  } finally {
    await h.close();
  }
});

test('a large body is read with back-pressure: the socket is paused while nobody reads', async () => {
  let request: Http1Request | undefined;
  const h = await serve((req, res) => {
    request = req;
    req.once('end', () => res.end('read'));
  });
  const size = 8 * 1024 * 1024;
  try {
    const client = connect(h.port, '127.0.0.1', () => {
      client.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`);
      client.write(Buffer.alloc(size, 'a'));
    });
    let answer = '';
    client.on('data', (d) => (answer += d.toString('latin1')));
    const closed = new Promise((r) => client.once('close', r));
    // Nobody reads the body: the server stops reading the socket once the request holds its high-water mark.
    await waitFor('the server to pause the socket', () => request !== undefined && h.sockets[0]!.isPaused());
    // At most its high-water mark and the one read that crossed it.
    assert.ok(request!.readableLength <= request!.readableHighWaterMark + 64 * 1024, `the request buffered ${request!.readableLength} bytes`);
    let got = 0;
    request!.on('data', (d: Buffer) => (got += d.length));
    await closed;
    assert.equal(got, size, 'reading resumed the socket, to the end');
    assert.ok(answer.endsWith('read'));
  } finally {
    await h.close();
  }
});

test("a client that leaves mid-response: the request is aborted, the response closes unfinished", async () => {
  let resolveClosed!: (v: { aborted: boolean; finished: boolean }) => void;
  const closed = new Promise<{ aborted: boolean; finished: boolean }>((r) => (resolveClosed = r));
  let started!: () => void;
  const began = new Promise<void>((r) => (started = r));
  const h = await serve((req, res) => {
    res.writeHead(200);
    res.write('partial');
    res.once('close', () => resolveClosed({ aborted: req.aborted, finished: res.writableFinished }));
    started();
  });
  try {
    const client = connect(h.port, '127.0.0.1', () => client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    client.on('error', () => {});
    await began;
    client.destroy();
    assert.deepEqual(await closed, { aborted: true, finished: false });
  } finally {
    await h.close();
  }
});

test('bytes that are not HTTP/1.1 go to clientError with the parser\'s code, and nothing reaches the handler', async () => {
  let requests = 0;
  const h = await serve(() => requests++);
  try {
    const out = await raw(h.port, 'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab');
    assert.match(out, /^HTTP\/1\.1 400 /);
    assert.deepEqual(h.errors, ['HPE_UNEXPECTED_CONTENT_LENGTH']);
    const tooLarge = await raw(h.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`);
    assert.match(tooLarge, /^HTTP\/1\.1 400 /);
    assert.equal(h.errors[1], 'HPE_HEADER_OVERFLOW');
    assert.equal(requests, 0);
  } finally {
    await h.close();
  }
});

test('a request whose head is not read within request_headers_timeout gets the timeout error', async () => {
  const h = await serve(() => assert.fail('no request is complete'), { headersTimeoutMs: 100 });
  try {
    const out = await raw(h.port, 'GET / HTTP/1.1\r\nHost: x\r\n');
    assert.match(out, /^HTTP\/1\.1 408 /);
    assert.deepEqual(h.errors, ['ERR_HTTP_REQUEST_TIMEOUT']);
  } finally {
    await h.close();
  }
});

test('an idle keep-alive connection is closed after keepAliveTimeout (and node:http\'s one-second margin)', async () => {
  const h = await serve((_req, res) => res.end('x'), { keepAliveTimeoutMs: 100 });
  try {
    const out = await raw(h.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(out, /Keep-Alive: timeout=0\r\n/);
    assert.ok(out.endsWith('\r\n\r\nx'), 'the server closed the idle connection');
  } finally {
    await h.close();
  }
});

// A stream's idle timeout on the socket's timer (100 ms: under four check intervals), and one kept by the periodic check (400 ms).
for (const streamIdleMs of [100, 400]) {
  test(`an idle connection is closed by the keep-alive check, which says 'timeout' once; a stream's idle timeout (${streamIdleMs} ms) says nothing between requests`, async () => {
    let served = 0;
    const h = await serve(
      (req, res) => {
        served++;
        // As the connection manager does with stream_idle_timeout, on every request.
        req.setTimeout(streamIdleMs, () => res.destroy());
        res.end(`r${served}`);
      },
      { keepAliveTimeoutMs: 300 },
    );
    try {
      const client = connect(h.port, '127.0.0.1');
      let out = '';
      client.on('data', (d: Buffer) => (out += d.toString('latin1')));
      const closed = new Promise<void>((resolve) => client.on('close', () => resolve()));
      client.write('GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n');
      await waitFor('both answers', () => (out.endsWith('r2') ? true : undefined));
      let timeouts = 0;
      h.sockets[0]!.on('timeout', () => timeouts++);
      // Idle: 1.3 s (keep-alive and margin) pass; the stream's timeout would have fired long before.
      await closed;
      assert.equal(served, 2);
      assert.equal(timeouts, 1, "only the keep-alive check's 'timeout', as the connection closed");
    } finally {
      await h.close();
    }
  });
}

test('an Upgrade leaves the parser with the bytes that followed the head', async () => {
  const h = await serve(() => assert.fail('an upgrade is not a request'));
  try {
    const client = connect(h.port, '127.0.0.1', () => client.write('GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nearly bytes'));
    client.on('error', () => {});
    await waitFor('the upgrade', () => h.upgrades.length > 0);
    const [u] = h.upgrades;
    assert.equal(u!.req.url, '/ws');
    assert.equal(u!.req.headers.upgrade, 'websocket');
    assert.equal(u!.head, 'early bytes');
    client.destroy();
  } finally {
    await h.close();
  }
});

test('headers are folded as node:http folds them', async () => {
  let headers: Http1Request['headers'] | undefined;
  const h = await serve((req, res) => {
    headers = req.headers;
    res.end();
  });
  try {
    await raw(h.port, 'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\nCookie: x=1\r\nCookie: y=2\r\nX-A: 1\r\nX-A: 2\r\nSet-Cookie: s=1\r\nSet-Cookie: t=2\r\nConnection: close\r\n\r\n');
    assert.equal(headers!.host, 'a', 'a repeated Host: the first');
    assert.equal(headers!.cookie, 'x=1; y=2');
    assert.equal(headers!['x-a'], '1, 2');
    assert.deepEqual(headers!['set-cookie'], ['s=1', 't=2']);
  } finally {
    await h.close();
  }
});

test("a stream's idle timeout kept by the periodic check restarts with every read of the request's body", async () => {
  let received = '';
  let receivedAtTimeout: string | undefined;
  const h = await serve((req, res) => {
    req.setTimeout(400, () => {
      receivedAtTimeout = received;
      res.writeHead(408, ['connection', 'close']);
      res.end();
    });
    req.setEncoding('latin1');
    req.on('data', (d: string) => (received += d));
  });
  try {
    const client = connect(h.port, '127.0.0.1');
    let out = '';
    client.on('data', (d: Buffer) => (out += d.toString('latin1')));
    const closed = new Promise<void>((resolve) => client.on('close', () => resolve()));
    client.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n');
    // A byte every 100 ms, eight times: each restarts the 400 ms idle time; then nothing.
    let sent = 0;
    const pace = setInterval(() => {
      client.write(String(++sent));
      if (sent === 8) clearInterval(pace);
    }, 100);
    await closed;
    clearInterval(pace);
    assert.equal(receivedAtTimeout, '12345678', 'the timeout waited for the body to stop coming');
    assert.match(out, /^HTTP\/1\.1 408 /);
  } finally {
    await h.close();
  }
});

// A timeout shorter than four check intervals is the socket's timer; a longer one is kept by the periodic check.
for (const { timeoutMs, everyMs, keeper } of [
  { timeoutMs: 150, everyMs: 50, keeper: 'the socket timer' },
  { timeoutMs: 400, everyMs: 100, keeper: 'the periodic check' },
]) {
  test(`a stream's idle timeout (req.setTimeout) restarts with every write, and fires once they stop (${keeper})`, async () => {
    let written = 0;
    let writtenAtTimeout = -1;
    let socketTimeout = -1;
    const h = await serve((req, res) => {
      res.writeHead(200);
      // As the connection manager does: the duration through the request, the response hears it once the request is read.
      req.setTimeout(timeoutMs);
      socketTimeout = req.socket.timeout ?? 0;
      res.on('timeout', () => {
        writtenAtTimeout = written;
        res.end('timed out');
      });
      // Writes every `everyMs`, eight times: each restarts the idle time.
      const timer = setInterval(() => {
        res.write(`${++written};`);
        if (written === 8) clearInterval(timer);
      }, everyMs);
    });
    try {
      const out = await raw(h.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.equal(writtenAtTimeout, 8, 'the timeout waited for the writes to stop');
      assert.match(out, /1;\r\n.*8;\r\n.*timed out/s);
      assert.equal(socketTimeout, keeper === 'the socket timer' ? timeoutMs : 0, `kept by ${keeper}`);
    } finally {
      await h.close();
    }
  });
}

test("a stream's idle handler (setStreamIdleTimeout) is called once the request stops coming, once the response stops going, and not after the response", async () => {
  const calls: string[] = [];
  const h = await serve((req, res) => {
    const name = req.url!.slice(1);
    req.setStreamIdleTimeout(150, () => {
      calls.push(`${name}:${req.complete ? 'response' : 'request'}`);
      res.writeHead(408, ['connection', name === 'slow-body' ? 'close' : 'keep-alive', 'content-length', '0']);
      res.end();
    });
    assert.equal(req.listenerCount('timeout') + res.listenerCount('timeout'), 0, 'no listeners');
    if (name === 'answered') {
      res.writeHead(200, ['content-length', '2']);
      res.end('ok');
    } else {
      // Read whole and never answered: the handler hears the response stop going. A body that
      // stops coming: the handler hears the request stop.
      req.resume();
    }
  });
  try {
    const client = connect(h.port, '127.0.0.1');
    let out = '';
    client.on('data', (d: Buffer) => (out += d.toString('latin1')));
    const closed = new Promise<void>((resolve) => client.on('close', () => resolve()));
    client.write('GET /answered HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor('the first response', () => /200 OK/.test(out) || undefined, 5_000);
    // The connection now sits idle between requests while, on another one, a request armed after
    // that response times out by the same clock: the answered request's handler must stay quiet.
    const probe = connect(h.port, '127.0.0.1');
    probe.on('data', () => {});
    probe.write('GET /probe HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor('the probe to time out', () => calls.includes('probe:response') || undefined, 5_000);
    probe.destroy();
    assert.deepEqual(calls, ['probe:response'], 'nothing for the answered request');
    client.write('POST /unanswered HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab');
    await waitFor('the second response', () => /408 /.test(out) || undefined, 5_000);
    client.write('POST /slow-body HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab');
    await closed;
    assert.deepEqual(calls, ['probe:response', 'unanswered:response', 'slow-body:request']);
    assert.equal(out.match(/HTTP\/1\.1 408 /g)?.length, 2);
  } finally {
    await h.close();
  }
});
