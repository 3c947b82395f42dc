import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fuzzBootstrap, fuzzDownstream, hpackLiterals, sendFuzzVector, type FuzzVector } from './helpers/downstream-fuzz.js';
import { frame, PREFACE } from './helpers/http2-abuse.js';
import { httpRequest, startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * Issue 39: no input crashes a process. Seeded fuzzed HTTP/1 and HTTP/2 connections (see
 * helpers/downstream-fuzz.ts; scripts/fuzz-downstream.ts runs a minute of them) against two
 * listeners, one refusing HTTP/1.0 as Envoy does by default, one accepting it; after every batch
 * each worker is the process it was and a probe request is served.
 */

let upstream: Upstream;

/** Writes `bytes` and reads until the proxy closes the connection. */
function sendRaw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const s = connect(port, '127.0.0.1', () => s.write(bytes, 'latin1'));
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    s.on('error', reject);
    s.on('close', () => resolve(got));
  });
}
let proxy: RunningProxy;

before(async () => {
  upstream = await startUpstream('up');
  proxy = await startProxy(fuzzBootstrap(upstream.port), ['--concurrency', '2']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
});

describe('inputs that crashed a worker', () => {
  for (const [name, bytes] of [
    ['GET / HTTP/2.0', 'GET / HTTP/2.0\r\nHost: t\r\n\r\n'],
    ['HTTP/0.9', 'GET /\r\n\r\n'],
  ] as const) {
    it(`${name} on an HTTP/1 listener is served as HTTP/1.0: 426 by default, then the connection closes`, async () => {
      const processes = proxy.children().sort();
      const answer = await sendRaw(proxy.ports.get('strict')!, bytes);
      assert.match(answer, /^HTTP\/1\.1 426 Upgrade Required\r\n/);
      assert.deepEqual(proxy.children().sort(), processes);
    });
  }

  it("one read of SETTINGS, a client's GOAWAY, a request and a malformed frame (nghttp2 1.61 aborted on it) closes only that connection", async () => {
    const processes = proxy.children().sort();
    const request = hpackLiterals([[':method', 'GET'], [':scheme', 'http'], [':authority', 'fuzz.test'], [':path', '/']]);
    const bytes = Buffer.concat([PREFACE, frame(4, 0, 0), frame(7, 0, 0, Buffer.alloc(8)), frame(1, 0x05, 1, request), frame(6, 0, 0, Buffer.alloc(2))]);
    for (const listener of ['strict', 'lenient']) await sendFuzzVector(proxy.ports.get(listener)!, { protocol: 'h2', bytes, halfClose: false, describe: 'nghttp2 assertion' }, 5000);
    assert.equal((await httpRequest(`http://127.0.0.1:${proxy.ports.get('strict')}/`)).body, 'probe');
    assert.deepEqual(proxy.children().sort(), processes, proxy.output().slice(-2000));
  });
});

describe('fuzzed downstream connections', () => {
  for (const [listener, seed] of [['strict', 39], ['lenient', 390]] as const) {
    it(`leave every process of the tree standing and the ${listener} listener serving (seed ${seed})`, async () => {
      const port = proxy.ports.get(listener)!;
      const processes = proxy.children().sort();
      let batch: FuzzVector[] = [];
      const outcome = await fuzzDownstream(port, {
        seed,
        count: 320,
        concurrency: 16,
        checkEvery: 16,
        deadlineMs: 300,
        onVector: (v) => {
          if (batch.length === 16) batch = [];
          batch.push(v);
        },
        check: async () => {
          const now = proxy.children().sort();
          assert.deepEqual(now, processes, `a process of the tree was replaced during the batch:\n${batch.map((v) => v.describe).join('\n')}\n--- proxy output ---\n${proxy.output().slice(-4000)}`);
          const probe = await httpRequest(`http://127.0.0.1:${port}/`);
          assert.equal(probe.status, 200);
          assert.equal(probe.body, 'probe');
        },
      });
      assert.equal(outcome.vectors, 320);
      assert.ok(outcome.h1 > 0 && outcome.h2 > 0, JSON.stringify(outcome));
      assert.doesNotMatch(proxy.output(), /request handling failed/, 'no request met a defect the connection manager caught');
    });
  }
});
