import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpServer, request, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { hcmFilter, staticCluster, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { startProxy, statValue, stopAllProxies, waitFor, withDeadline } from './helpers/proxy.js';

/**
 * per_connection_buffer_limit_bytes (listener and cluster): a side that does not read holds back
 * the other side's reading once its connection has that much unwritten in the proxy, and
 * everything arrives once it reads again; Envoy's flow-control counters say so.
 */

const servers: (Server | HttpServer)[] = [];
after(async () => {
  await stopAllProxies();
  for (const s of servers) s.close();
});

const LIMIT = 64 * 1024;
/** More than the kernel's socket buffers on both sides can absorb, so the proxy must hold back. */
const SIZE = 48 * 1024 * 1024;

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function listen<S extends Server | HttpServer>(server: S): Promise<number> {
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

function tcpBootstrap(upstreamPort: number, clusterLimit = LIMIT): object {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [{
        name: 'tcp',
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
        per_connection_buffer_limit_bytes: LIMIT,
        filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'tcp', cluster: 'sink' } }] }],
      }],
      clusters: [{ ...staticCluster('sink', upstreamPort), per_connection_buffer_limit_bytes: clusterLimit }],
    },
  };
}

/** Reads `socket` to its end. */
function readAll(socket: Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d)).once('end', () => resolve(Buffer.concat(chunks))).once('error', reject);
  });
}

describe('per_connection_buffer_limit_bytes', () => {
  it('TCP proxy: an upstream that does not read pauses the client\'s side, one that reads again gets every byte', async () => {
    let upstreamSocket: Socket | undefined;
    let received: Promise<Buffer> | undefined;
    const port = await listen(createServer({ pauseOnConnect: true }, (s) => {
      upstreamSocket = s; // paused: it reads nothing until the test says
    }));
    const proxy = await startProxy(tcpBootstrap(port), ['--concurrency', '1']);
    const payload = randomBytes(SIZE);
    const client = connect(proxy.ports.get('tcp')!, '127.0.0.1');
    client.on('error', () => {});
    client.write(payload, () => client.end());
    await waitFor('the upstream connection to back up', async () => ((await statValue(proxy, 'cluster.sink.upstream_flow_control_backed_up_total')) >= 1 ? true : undefined));
    assert.ok(client.writableLength > 0, 'the client still has bytes the proxy has not read');
    assert.ok((await statValue(proxy, 'tcp.tcp.downstream_flow_control_paused_reading_total')) >= 1);
    // What the proxy holds for the upstream that does not read, as Envoy's gauge shows it.
    assert.ok((await statValue(proxy, 'cluster.sink.upstream_cx_tx_bytes_buffered')) > 0);
    received = readAll(upstreamSocket!);
    upstreamSocket!.resume();
    const got = await withDeadline('every byte upstream', received);
    assert.equal(got.length, SIZE);
    assert.equal(sha(got), sha(payload));
    assert.ok((await statValue(proxy, 'cluster.sink.upstream_flow_control_drained_total')) >= 1);
    assert.ok((await statValue(proxy, 'tcp.tcp.downstream_flow_control_resumed_reading_total')) >= 1);
    client.destroy();
  });

  it('TCP proxy: a client that leaves with bytes still on their way upstream has them flushed first (upstream_flush_*)', async () => {
    let upstreamSocket: Socket | undefined;
    const port = await listen(createServer({ pauseOnConnect: true }, (s) => {
      upstreamSocket = s;
    }));
    // The cluster's limit is above the payload: the client's side keeps being read (a paused socket would not see the reset until it reads again).
    const proxy = await startProxy(tcpBootstrap(port, 2 * SIZE), ['--concurrency', '1']);
    const payload = randomBytes(SIZE);
    const client = connect(proxy.ports.get('tcp')!, '127.0.0.1');
    client.on('error', () => {});
    client.write(payload);
    await waitFor('bytes held for the upstream', async () => ((await statValue(proxy, 'cluster.sink.upstream_cx_tx_bytes_buffered')) > 0 ? true : undefined));
    client.resetAndDestroy(); // gone, with a reset
    await waitFor('the flush counted', async () => ((await statValue(proxy, 'tcp.tcp.upstream_flush_active')) === 1 ? true : undefined));
    assert.equal(await statValue(proxy, 'tcp.tcp.upstream_flush_total'), 1);
    // The upstream reads again: what the proxy held goes out, then the upstream connection closes.
    const received = readAll(upstreamSocket!);
    upstreamSocket!.resume();
    const got = await withDeadline('the flushed bytes upstream', received);
    assert.ok(got.length > 0 && got.length <= SIZE);
    assert.deepEqual(got, payload.subarray(0, got.length), 'a prefix of what the client sent, in order');
    await waitFor('the flush to end', async () => ((await statValue(proxy, 'tcp.tcp.upstream_flush_active')) === 0 ? true : undefined));
  });

  it('TCP proxy: a client that does not read pauses the upstream\'s side; reading again gets every byte', async () => {
    const payload = randomBytes(SIZE);
    const port = await listen(createServer((s) => {
      s.on('error', () => {});
      s.end(payload);
    }));
    const proxy = await startProxy(tcpBootstrap(port), ['--concurrency', '1']);
    const client = connect({ port: proxy.ports.get('tcp')!, host: '127.0.0.1' });
    client.pause();
    await waitFor('the upstream\'s reading to pause', async () => ((await statValue(proxy, 'cluster.sink.upstream_flow_control_paused_reading_total')) >= 1 ? true : undefined));
    // What the proxy holds for the client that does not read, as Envoy's gauge shows it.
    assert.ok((await statValue(proxy, 'tcp.tcp.downstream_cx_tx_bytes_buffered')) > 0);
    const got = await withDeadline('every byte downstream', readAll(client.resume()));
    assert.equal(got.length, SIZE);
    assert.equal(sha(got), sha(payload));
    assert.ok((await statValue(proxy, 'cluster.sink.upstream_flow_control_resumed_reading_total')) >= 1);
  });

  it('HTTP: a client that does not read its response pauses the upstream at the listener\'s limit; the whole body arrives once it reads', async () => {
    const payload = randomBytes(SIZE);
    const port = await listen(createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(SIZE) });
      res.end(payload);
    }));
    const bootstrap = {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [{
          name: 'web',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          per_connection_buffer_limit_bytes: LIMIT,
          filter_chains: [{ filters: [hcmFilter('web', [{ match: { prefix: '/' }, route: { cluster: 'big' } }])] }],
        }],
        clusters: [staticCluster('big', port)],
      },
    };
    const proxy = await startProxy(bootstrap, ['--concurrency', '1']);
    const body = await withDeadline('the response', new Promise<Buffer>((resolve, reject) => {
      request({ host: '127.0.0.1', port: proxy.ports.get('web')!, path: '/' }, (res) => {
        res.pause();
        void waitFor('the upstream\'s reading to pause', async () => ((await statValue(proxy, 'cluster.big.upstream_flow_control_paused_reading_total')) >= 1 ? true : undefined)).then(() => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d)).once('end', () => resolve(Buffer.concat(chunks)));
          res.resume();
        }, reject);
      }).once('error', reject).end();
    }));
    assert.equal(body.length, SIZE);
    assert.equal(sha(body), sha(payload));
    assert.ok((await statValue(proxy, 'cluster.big.upstream_flow_control_resumed_reading_total')) >= 1);
  });

  it("HTTP: a client's body to an upstream that does not read is paused (downstream_flow_control_*), and arrives whole once it reads", async () => {
    const payload = randomBytes(SIZE);
    let readNow: (() => void) | undefined;
    let received: Promise<Buffer> | undefined;
    const port = await listen(createHttpServer((req, res) => {
      req.pause();
      received = new Promise<Buffer>((resolve) => {
        readNow = () => {
          const chunks: Buffer[] = [];
          req.on('data', (d: Buffer) => chunks.push(d)).once('end', () => {
            res.end('got it');
            resolve(Buffer.concat(chunks));
          });
          req.resume();
        };
      });
    }));
    const bootstrap = {
      admin: { address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        listeners: [{
          name: 'web',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [hcmFilter('upload', [{ match: { prefix: '/' }, route: { cluster: 'slow_reader' } }])] }],
        }],
        clusters: [staticCluster('slow_reader', port)],
      },
    };
    const proxy = await startProxy(bootstrap, ['--concurrency', '1']);
    const answer = new Promise<number>((resolve, reject) => {
      const rq = request({ host: '127.0.0.1', port: proxy.ports.get('web')!, path: '/', method: 'POST', headers: { 'content-length': String(SIZE) } }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      });
      rq.once('error', reject);
      rq.end(payload);
    });
    const flow = async () => ({
      paused: await statValue(proxy, 'http.upload.downstream_flow_control_paused_reading_total'),
      resumed: await statValue(proxy, 'http.upload.downstream_flow_control_resumed_reading_total'),
    });
    // While the kernel's buffers fill, the body pauses and resumes with each write; once they are full, it stays paused.
    await waitFor("the client's body to be held paused", async () => {
      const f = await flow();
      return f.paused >= 1 && f.paused === f.resumed + 1 ? true : undefined;
    });
    await waitFor('the upstream to have the request', () => readNow);
    readNow!();
    assert.equal(await withDeadline('the answer', answer), 200);
    const got = await withDeadline('the body upstream', received!);
    assert.equal(got.length, SIZE);
    assert.equal(sha(got), sha(payload));
    const after = await flow();
    assert.equal(after.resumed, after.paused, 'every pause was followed by a resume');
  });
});
