import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { hcmFilter, staticCluster } from './helpers/bootstraps.js';
import { hpackLiterals } from './helpers/downstream-fuzz.js';
import { frame, PREFACE } from './helpers/http2-abuse.js';
import { startProxy, statValue, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Issue 39's protocol semantics, each as Envoy has it:
 * - a request line of any version but HTTP/1.1 is HTTP/1.0 (http1/codec_impl.cc,
 *   checkProtocolVersion): 426 unless accept_http_10, then answered with an HTTP/1.0 status line;
 * - a Transfer-Encoding other than a lone `chunked` is 501 (http1.invalid_transfer_encoding);
 * - pipelined requests are answered in order, a broken one after those before it, and nothing
 *   after a response that closed the connection;
 * - the route timeout runs from the end of the client's request (router.cc, onRequestComplete);
 * - HTTP/2 streams beyond an acknowledged max_concurrent_streams are a PROTOCOL_ERROR of the
 *   connection, and REFUSED_STREAM before the SETTINGS are acknowledged.
 */

let upstream: Upstream;
let proxy: RunningProxy;
/** Requests the upstream parsed, by path. */
const seen: string[] = [];

const port = (name: string) => proxy.ports.get(name)!;

function listener(name: string, extra: object = {}): object {
  const hcm = hcmFilter(name, [
    { match: { prefix: '/slow-upload' }, route: { cluster: 'up', timeout: '0.4s', prefix_rewrite: '/echo' } },
    { match: { prefix: '/slow-hold' }, route: { cluster: 'up', timeout: '0.4s', prefix_rewrite: '/hold' } },
    { match: { prefix: '/' }, route: { cluster: 'up' } },
  ]);
  Object.assign(hcm.typed_config as object, extra);
  return { name, address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [hcm] }] };
}

/** Writes `bytes`, then reads until the proxy closes the connection. */
function exchange(p: number, bytes: string, onConnected?: (s: Socket) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const s = connect(p, '127.0.0.1', () => {
      s.write(bytes, 'latin1');
      onConnected?.(s);
    });
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    s.on('error', reject);
    s.on('close', () => resolve(got));
  });
}

/** The status lines of the responses on a connection (the bodies here hold none). */
const statusLines = (answer: string) => [...answer.matchAll(/HTTP\/1\.[01] \d{3}[^\r]*/g)].map((m) => m[0]);

before(async () => {
  upstream = await startUpstream('up');
  upstream.server.prependListener('request', (req: { url?: string }) => seen.push(req.url ?? ''));
  proxy = await startProxy(
    {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [
          listener('strict'),
          listener('h10', { http_protocol_options: { accept_http_10: true, default_host_for_http_10: 'legacy.test' } }),
          listener('h2limit', { codec_type: 'HTTP2', http2_protocol_options: { max_concurrent_streams: 1 } }),
        ],
        clusters: [staticCluster('up', upstream.port)],
      },
    },
    ['--concurrency', '1'],
  );
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

describe('request-line versions', () => {
  for (const version of ['HTTP/1.2', 'HTTP/9.1', 'HTTP/2.0', 'HTTP/0.9']) {
    it(`${version} is HTTP/1.0: 426 and the connection closes, unless accept_http_10`, async () => {
      const refused = await exchange(port('strict'), `GET /echo ${version}\r\nHost: x\r\n\r\n`);
      assert.deepEqual(statusLines(refused), ['HTTP/1.1 426 Upgrade Required']);
      const served = await exchange(port('h10'), `GET /echo ${version}\r\nHost: x\r\n\r\n`);
      assert.deepEqual(statusLines(served), ['HTTP/1.0 200 OK'], served);
    });
  }

  it("HTTP/0.9's bare `GET /` with accept_http_10 is served with default_host_for_http_10", async () => {
    const served = await exchange(port('h10'), 'GET /echo\r\n\r\n');
    assert.deepEqual(statusLines(served), ['HTTP/1.0 200 OK'], served);
    assert.match(served, /"host":"legacy\.test"/);
  });
});

describe('Transfer-Encoding', () => {
  for (const coding of ['gzip, chunked', 'identity, chunked', 'chunked, gzip', 'identity', 'gzip', 'chunked\r\nTransfer-Encoding: chunked']) {
    it(`${JSON.stringify(coding)} is 501, and the request goes nowhere`, async () => {
      seen.length = 0;
      const errorsBefore = await statValue(proxy, 'http.strict.downstream_cx_protocol_error');
      const answer = await exchange(port('strict'), `POST /te HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ${coding}\r\n\r\n5\r\nhello\r\n0\r\n\r\n`);
      assert.deepEqual(statusLines(answer), ['HTTP/1.1 501 Not Implemented'], answer);
      assert.deepEqual(seen, []);
      assert.equal(await statValue(proxy, 'http.strict.downstream_cx_protocol_error'), errorsBefore + 1);
    });
  }

  it('a lone chunked, in any case, is served', async () => {
    const answer = await exchange(port('strict'), 'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
    assert.deepEqual(statusLines(answer), ['HTTP/1.1 200 OK']);
    assert.match(answer, /"body":"hello"/);
  });

  it('a CONNECT with a Transfer-Encoding is 501', async () => {
    const answer = await exchange(port('strict'), 'CONNECT up:443 HTTP/1.1\r\nHost: up:443\r\nTransfer-Encoding: chunked\r\n\r\n');
    assert.deepEqual(statusLines(answer), ['HTTP/1.1 501 Not Implemented'], answer);
  });
});

describe('HTTP/1 pipelining', () => {
  it('answers a request held upstream before the 400 of the broken request that followed it', async () => {
    const answer = exchange(port('strict'), 'GET /hold?key=pipelined HTTP/1.1\r\nHost: x\r\n\r\nNOT A REQUEST\r\n\r\n');
    await waitFor('the first request to be held upstream', () => upstream.held('pipelined') === 1 || undefined);
    upstream.release('pipelined');
    const got = await answer;
    assert.deepEqual(statusLines(got), ['HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request'], got);
    assert.match(got, /up held/);
  });

  it('answers the requests queued before the broken one first, in order', async () => {
    const got = await exchange(port('strict'), 'GET /hold?key=queued HTTP/1.1\r\nHost: x\r\n\r\nGET /echo?second HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n', () => {
      void waitFor('the first request to be held upstream', () => upstream.held('queued') === 1 || undefined).then(() => upstream.release('queued'));
    });
    assert.deepEqual(statusLines(got), ['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request'], got);
    assert.ok(got.indexOf('up held') < got.indexOf('second'), got);
  });

  it('reads and answers nothing after a response that said Connection: close', async () => {
    seen.length = 0;
    const answer = exchange(port('strict'), 'GET /hold?key=closing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /after-close HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor('the first request to be held upstream', () => upstream.held('closing') === 1 || undefined);
    upstream.release('closing');
    const got = await answer;
    assert.deepEqual(statusLines(got), ['HTTP/1.1 200 OK'], got);
    assert.deepEqual(seen, ['/hold?key=closing']);
  });
});

describe('the route timeout', () => {
  /** POSTs `chunks` bytes, one each 100 ms (twice the route's 0.4 s timeout for 8), and reads the answer to its end. */
  function slowUpload(path: string, chunks: number): Promise<string> {
    return new Promise((resolve, reject) => {
      let answer = '';
      const s = connect(port('strict'), '127.0.0.1', () => {
        s.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${chunks}\r\nConnection: close\r\n\r\n`);
        let sent = 0;
        const tick = setInterval(() => {
          s.write('x');
          if (++sent === chunks) clearInterval(tick);
        }, 100);
      });
      s.on('data', (d: Buffer) => (answer += d.toString('latin1')));
      s.on('error', reject);
      s.on('close', () => resolve(answer));
    });
  }

  it('starts when the request has been read: an upload longer than the timeout is answered', async () => {
    const got = await slowUpload('/slow-upload', 8);
    assert.deepEqual(statusLines(got), ['HTTP/1.1 200 OK'], got);
    assert.match(got, /"body":"xxxxxxxx"/);
  });

  it('then ends a response that does not come: 504 once the upload is done', async () => {
    const got = await slowUpload('/slow-hold?key=never', 8);
    assert.deepEqual(statusLines(got), ['HTTP/1.1 504 Gateway Timeout'], got);
    await waitFor('the held request to be abandoned upstream', () => upstream.held('never') === 0 || undefined);
  });
});

/** Opens an HTTP/2 connection with raw frames; `ack` says whether the proxy's SETTINGS are acknowledged before the requests. */
function h2Streams(p: number, ack: boolean, streams: number[]): Promise<{ goaway?: number; resets: Map<number, number>; closed: boolean }> {
  return new Promise((resolve) => {
    const request = hpackLiterals([[':method', 'GET'], [':scheme', 'http'], [':authority', 'x'], [':path', '/hold?key=h2']]);
    const out = { goaway: undefined as number | undefined, resets: new Map<number, number>(), closed: false };
    let buf = Buffer.alloc(0);
    let sent = false;
    const send = () => {
      if (sent) return;
      sent = true;
      s.write(Buffer.concat(streams.map((id) => frame(1, 0x05, id, request))));
    };
    const s = connect(p, '127.0.0.1', () => {
      s.write(Buffer.concat([PREFACE, frame(4, 0, 0)]));
      if (!ack) send();
    });
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 9) {
        const len = buf.readUIntBE(0, 3);
        if (buf.length < 9 + len) break;
        const [type, flags, id, payload] = [buf[3]!, buf[4]!, buf.readUInt32BE(5) & 0x7fffffff, buf.subarray(9, 9 + len)];
        buf = buf.subarray(9 + len);
        if (type === 4 && (flags & 1) === 0 && ack) {
          s.write(frame(4, 1, 0));
          send();
        }
        if (type === 7) out.goaway = payload.readUInt32BE(4);
        if (type === 3) {
          out.resets.set(id, payload.readUInt32BE(0));
          if (!ack) s.destroy(); // what was asked of it is known
        }
      }
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      out.closed = true;
      resolve(out);
    });
  });
}

describe('HTTP/2 streams beyond max_concurrent_streams', () => {
  it('once the SETTINGS are acknowledged: GOAWAY with PROTOCOL_ERROR, and downstream_cx_protocol_error', async () => {
    const before = await statValue(proxy, 'http.h2limit.downstream_cx_protocol_error');
    const got = await h2Streams(port('h2limit'), true, [1, 3]);
    assert.equal(got.goaway, 1, 'PROTOCOL_ERROR');
    assert.equal(await statValue(proxy, 'http.h2limit.downstream_cx_protocol_error'), before + 1);
  });

  it('before they are acknowledged: the stream beyond is refused (REFUSED_STREAM), the connection stays', async () => {
    const got = await h2Streams(port('h2limit'), false, [1, 3]);
    assert.equal(got.resets.get(3), 7, 'REFUSED_STREAM');
    assert.equal(got.goaway, undefined);
    upstream.release('h2');
  });
});
