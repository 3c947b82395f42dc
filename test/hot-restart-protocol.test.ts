import assert from 'node:assert/strict';
import { connect, createServer } from 'node:net';
import { describe, it } from 'node:test';
import { native } from '../shared/native/index.js';
import { encodeMessage, HotRestartChannel, HotRestartRpcError, MAX_DATAGRAM, Reassembler, type RequestMessage } from '../supervisor/hot-restart/protocol.js';
import { waitFor, withDeadline } from './helpers/proxy.js';

const socketPath = `@proxy_protocol_test_${process.pid}`;

describe('hot-restart framing', () => {
  it("frames as Envoy does: an 8-byte length, then the message, in datagrams of at most 4 KiB", () => {
    const counters = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`cluster.service_${i}.upstream_rq_total`, i]));
    const datagrams = encodeMessage({ reply: { stats: { memory_allocated: 1, num_connections: 2, counter_deltas: counters, gauges: {} } } });
    assert.ok(datagrams.length > 1);
    assert.ok(datagrams.every((d) => d.length <= MAX_DATAGRAM));
    const total = datagrams.reduce((n, d) => n + d.length, 0);
    assert.equal(Number(datagrams[0]!.readBigUInt64BE(0)), total - 8);
    const r = new Reassembler();
    let out;
    for (const d of datagrams) out = r.push(d);
    assert.equal(out?.reply?.stats?.counter_deltas['cluster.service_399.upstream_rq_total'], 399);
  });

  it('drops datagrams that break the framing, and counts them', () => {
    const r = new Reassembler();
    assert.equal(r.push(Buffer.from([1, 2, 3])), undefined);
    const [one] = encodeMessage({ request: { terminate: {} } });
    assert.equal(r.push(Buffer.concat([one!, Buffer.from('extra')])), undefined, 'overshoot');
    assert.equal(r.dropped, 2);
    assert.deepEqual(r.push(one!)?.request, { terminate: {} }, 'the next message frames again');
  });
});

describe('the hot-restart channel between two epochs', () => {
  it('carries requests and replies, and a listening descriptor by SCM_RIGHTS', async () => {
    const [fd, port] = native.listenTcp('127.0.0.1', 0, 16);
    const seen: RequestMessage[] = [];
    const parent = new HotRestartChannel({
      socketPath, socketMode: 0, baseId: 1, epoch: 0,
      onRequest: (rq) => {
        seen.push(rq);
        if (rq.pass_listen_socket) return rq.pass_listen_socket.address === `tcp://127.0.0.1:${port}` ? { reply: { pass_listen_socket: { fd } }, fd } : { reply: { pass_listen_socket: { fd: -1 } } };
        if (rq.shutdown_admin) return { reply: { shutdown_admin: { original_start_time_unix_seconds: 1_700_000_000, original_start_time_unix_ms: 1_700_000_000_123 } } };
        return {};
      },
    });
    const child = new HotRestartChannel({ socketPath, socketMode: 0, baseId: 1, epoch: 1, onRequest: () => ({}) });
    try {
      const admin = await child.request({ shutdown_admin: {} }, { timeoutMs: 2000, expectReply: true });
      assert.equal(admin.reply?.shutdown_admin?.original_start_time_unix_ms, 1_700_000_000_123);

      const none = await child.request({ pass_listen_socket: { address: 'tcp://127.0.0.1:1' } }, { timeoutMs: 2000, expectReply: true });
      assert.deepEqual([none.reply?.pass_listen_socket?.fd, none.fd], [-1, -1]);

      const got = await child.request({ pass_listen_socket: { address: `tcp://127.0.0.1:${port}` } }, { timeoutMs: 2000, expectReply: true });
      assert.ok(got.fd >= 0 && got.fd !== fd, 'a new descriptor for the same socket');
      // The received descriptor is the listening socket itself: serve on it.
      const server = createServer((s) => s.end('served'));
      await new Promise<void>((resolve) => server.listen({ fd: got.fd }, resolve));
      const text = await new Promise<string>((resolve) => {
        const c = connect(port, '127.0.0.1');
        let t = '';
        c.on('data', (d) => (t += d));
        c.on('end', () => resolve(t));
      });
      assert.equal(text, 'served');
      server.close();

      await child.request({ drain_listeners: {} }, { timeoutMs: 2000, expectReply: false });
      await waitFor('the parent to get drain_listeners', () => (seen.length === 4 ? true : undefined));
      assert.deepEqual(seen.map((r) => Object.keys(r)[0]), ['shutdown_admin', 'pass_listen_socket', 'pass_listen_socket', 'drain_listeners']);
    } finally {
      child.close();
      parent.close();
      native.closeFd(fd);
    }
  });

  it('a request to a parent that is not there fails within its deadline instead of hanging', async () => {
    const orphan = new HotRestartChannel({ socketPath, socketMode: 0, baseId: 2, epoch: 1, onRequest: () => ({}) });
    try {
      await withDeadline('the request to fail', assert.rejects(orphan.request({ stats: {} }, { timeoutMs: 300, expectReply: true }), HotRestartRpcError));
    } finally {
      orphan.close();
    }
  });

  it('a parent that never answers makes the request time out', async () => {
    const mute = new HotRestartChannel({ socketPath, socketMode: 0, baseId: 3, epoch: 0, onRequest: () => ({}) });
    const child = new HotRestartChannel({ socketPath, socketMode: 0, baseId: 3, epoch: 1, onRequest: () => ({}) });
    try {
      await assert.rejects(child.request({ stats: {} }, { timeoutMs: 200, expectReply: true }), /no reply from the parent epoch .* within 200 ms/);
    } finally {
      child.close();
      mute.close();
    }
  });

  it('a second process on the same base id and epoch slot is refused (EADDRINUSE)', () => {
    const first = new HotRestartChannel({ socketPath, socketMode: 0, baseId: 4, epoch: 0, onRequest: () => ({}) });
    try {
      assert.throws(() => new HotRestartChannel({ socketPath, socketMode: 0, baseId: 4, epoch: 0, onRequest: () => ({}) }), (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE');
    } finally {
      first.close();
    }
  });
});
