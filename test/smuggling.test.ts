import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { httpListener, staticCluster } from './helpers/bootstraps.js';
import { startProxy, stopAllProxies, type RunningProxy } from './helpers/proxy.js';
import { sendVector, statuses, VECTORS } from './helpers/smuggling-vectors.js';

/**
 * Request smuggling, probed as issue 13 did (the vectors are in helpers/smuggling-vectors.ts). The
 * backend records every request it parses whole and the raw bytes it got; `/smuggled` must never
 * reach it, and every ambiguous framing must be refused (400, or Envoy's 501 for a transfer
 * coding it does not serve) without a request reaching it whole (a body found broken midway was
 * already streaming: the backend sees that request cut off).
 */

let backend: Server;
const seen: string[] = [];
let rawBytes = '';
let proxy: RunningProxy;
let port: number;

before(async () => {
  backend = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`);
      res.end('backend');
    });
  });
  backend.on('connection', (s) => s.on('data', (d: Buffer) => (rawBytes += d.toString('latin1'))));
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const backendPort = (backend.address() as { port: number }).port;
  proxy = await startProxy({ static_resources: { listeners: [httpListener('edge', 0)], clusters: [staticCluster('backend', backendPort)] }, admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } } }, ['--concurrency', '1']);
  port = proxy.ports.get('edge')!;
});

after(async () => {
  await stopAllProxies();
  backend.closeAllConnections();
  await new Promise((resolve) => backend.close(resolve));
});

describe('request smuggling vectors', () => {
  for (const v of VECTORS) {
    it(`${v.name}: ${v.expect}, and /smuggled never reaches the backend`, async () => {
      seen.length = 0;
      rawBytes = '';
      const answer = await sendVector(port, v.bytes);
      const codes = statuses(answer);
      assert.ok(!seen.some((r) => r.includes('smuggled')), `the backend parsed ${JSON.stringify(seen)} from ${JSON.stringify(rawBytes)}`);
      if (v.expect === 'refused') {
        assert.equal(codes[0], v.status ?? 400, `answered ${JSON.stringify(answer.slice(0, 200))}`);
        assert.ok(!seen.includes('POST /vector') && !seen.includes('GET /vector'), `forwarded whole despite the 400: ${JSON.stringify(seen)}`);
      } else {
        assert.equal(codes[0], 200, `answered ${JSON.stringify(answer.slice(0, 200))}`);
        assert.ok(seen.some((r) => r.endsWith(' /vector')), JSON.stringify(seen));
      }
    });
  }
});
