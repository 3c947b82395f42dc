import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';
import { describe, it } from 'node:test';
import { native } from '../shared/native/index.js';
import { epochSockets } from '../supervisor/hot-restart/naming.js';
import { encodeMessage, MAX_DATAGRAM, Reassembler, type RequestMessage } from '../supervisor/hot-restart/framing.js';
import { HotRestartChannel, HotRestartRpcError, trustedSender, type ChannelOptions } from '../supervisor/hot-restart/protocol.js';
import { nextMessageId, seal, unseal } from '../supervisor/hot-restart/seal.js';
import { waitFor, withDeadline } from './helpers/proxy.js';

const socketPath = `@proxy_protocol_test_${process.pid}`;
const secret = randomBytes(32);

function channel(baseId: number, epoch: number, onRequest: ChannelOptions['onRequest'] = () => ({}), over: Partial<ChannelOptions> = {}): HotRestartChannel {
  return new HotRestartChannel({ socketPath, socketMode: 0, baseId, epoch, secret, trustRoot: false, onRequest, ...over });
}

describe('hot-restart framing', () => {
  const noDrops = (why: string) => assert.fail(`dropped: ${why}`);

  it("frames as Envoy does (an 8-byte length, then the message), in pieces whose sealed datagrams fit 4 KiB", () => {
    const counters = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`cluster.service_${i}.upstream_rq_total`, i]));
    const pieces = encodeMessage({ reply: { stats: { memory_allocated: 1, num_connections: 2, counter_deltas: counters, gauges: {} } } });
    assert.ok(pieces.length > 1);
    assert.ok(pieces.every((p) => seal(secret, '@x', 1n, 0, true, p).length <= MAX_DATAGRAM));
    const total = pieces.reduce((n, d) => n + d.length, 0);
    assert.equal(Number(pieces[0]!.readBigUInt64BE(0)), total - 8);
    const r = new Reassembler(1 << 20, noDrops);
    let out;
    for (const [i, p] of pieces.entries()) out = r.push(p, i === 0, 7n);
    assert.equal(out?.message.reply?.stats?.counter_deltas['cluster.service_399.upstream_rq_total'], 399);
    assert.equal(out?.messageId, 7n);
  });

  it('drops what breaks the framing, checks the declared size before keeping anything, and frames again at the next first piece', () => {
    const dropped: string[] = [];
    const r = new Reassembler(1024, (why) => dropped.push(why));
    const [one] = encodeMessage({ request: { terminate: {} } });
    assert.equal(r.push(Buffer.from([1, 2, 3]), true, 1n), undefined);
    const huge = Buffer.alloc(18);
    huge.writeBigUInt64BE(1n << 20n, 0); // 18 bytes declaring 1 MiB: the jam of issue 13
    assert.equal(r.push(huge, true, 2n), undefined);
    assert.equal(r.push(Buffer.alloc(100), false, 2n), undefined, 'its next piece belongs to no message');
    assert.equal(r.push(Buffer.concat([one!, Buffer.from('extra')]), true, 3n), undefined, 'overshoot');
    const half = Buffer.alloc(16);
    half.writeBigUInt64BE(100n, 0);
    assert.equal(r.push(half, true, 4n), undefined, 'a message in progress...');
    assert.deepEqual(r.push(one!, true, 5n)?.message.request, { terminate: {} }, '...is abandoned by the next first piece');
    assert.deepEqual(dropped, [
      'a first piece too short to hold a length',
      'a message declaring 1048576 bytes (the limit is 1024)',
      'a piece of no message in progress',
      "a piece past its message's declared length",
      'a message left incomplete by the next one',
    ]);
  });

  it("trusts the proxy's own user, and root only with --hot-restart-trust-root", () => {
    assert.ok(trustedSender(1000, 1000, false));
    assert.ok(!trustedSender(1001, 1000, false));
    assert.ok(!trustedSender(0, 1000, false));
    assert.ok(trustedSender(0, 1000, true));
    assert.ok(!trustedSender(65534, 1000, true));
    assert.ok(trustedSender(0, 0, false), 'a proxy run by root trusts root');
  });

  it('a seal is good for one socket and one secret only', () => {
    const datagram = seal(secret, '@proxy_parent_10', 42n, 1, true, Buffer.from('piece'));
    const opened = unseal(secret, '@proxy_parent_10', datagram);
    assert.ok(typeof opened !== 'string');
    assert.deepEqual([opened.messageId, opened.senderEpoch, opened.first, opened.piece.toString()], [42n, 1, true, 'piece']);
    assert.match(unseal(secret, '@proxy_parent_11', datagram) as string, /not sealed with this deployment's secret/);
    assert.match(unseal(randomBytes(32), '@proxy_parent_10', datagram) as string, /not sealed/);
    const tampered = Buffer.from(datagram);
    tampered[tampered.length - 1] = tampered.at(-1)! ^ 1;
    assert.match(unseal(secret, '@proxy_parent_10', tampered) as string, /not sealed/);
    assert.match(unseal(secret, '@proxy_parent_10', Buffer.alloc(10)) as string, /a 10-byte datagram/);
  });
});

describe('the hot-restart channel between two epochs', () => {
  it('carries requests and replies, and a listening descriptor by SCM_RIGHTS', async () => {
    const [fd, port] = native.listenTcp('127.0.0.1', 0, 16);
    const seen: RequestMessage[] = [];
    const parent = channel(1, 0, (rq) => {
      seen.push(rq);
      if (rq.pass_listen_socket) return rq.pass_listen_socket.address === `tcp://127.0.0.1:${port}` ? { reply: { pass_listen_socket: { fd } }, fd } : { reply: { pass_listen_socket: { fd: -1 } } };
      if (rq.shutdown_admin) return { reply: { shutdown_admin: { original_start_time_unix_seconds: 1_700_000_000, original_start_time_unix_ms: 1_700_000_000_123 } } };
      return {};
    });
    const child = channel(1, 1);
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
    const orphan = channel(2, 1);
    try {
      await withDeadline('the request to fail', assert.rejects(orphan.request({ stats: {} }, { timeoutMs: 300, expectReply: true }), HotRestartRpcError));
    } finally {
      orphan.close();
    }
  });

  it('a parent that never answers makes the request time out', async () => {
    const mute = channel(3, 0);
    const child = channel(3, 1);
    try {
      await assert.rejects(child.request({ stats: {} }, { timeoutMs: 200, expectReply: true }), /no reply from the parent epoch .* within 200 ms/);
    } finally {
      child.close();
      mute.close();
    }
  });

  it('a second process on the same base id and epoch slot is refused (EADDRINUSE)', () => {
    const first = channel(4, 0);
    try {
      assert.throws(() => channel(4, 0), (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE');
    } finally {
      first.close();
    }
  });
});

describe('what the hot-restart channel turns away', () => {
  /** A socket of our own, sending whatever a local process could send. */
  function prober(name: string) {
    const received: Buffer[] = [];
    const fds: number[] = [];
    const handle = native.dgramOpen(name, (data, fd) => {
      received.push(data);
      if (fd >= 0) fds.push(fd);
    });
    return {
      received,
      fds,
      /** A receiver in this same process drains its queue only between events: wait for it when full. */
      send: async (dest: string, data: Buffer) => {
        for (;;) {
          try {
            return native.dgramSend(handle, dest, data, -1);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
            await new Promise((resolve) => setImmediate(resolve));
          }
        }
      },
      close: () => {
        native.dgramClose(handle);
        for (const fd of fds) native.closeFd(fd);
      },
    };
  }
  const sealed = (key: Buffer, dest: string, senderEpoch: number, message: object, id = nextMessageId()) =>
    encodeMessage(message).map((piece, i) => seal(key, dest, id, senderEpoch, i === 0, piece));

  it('garbage, unsealed requests, other deployments and other epochs get nothing; the real next epoch then takes its socket', async () => {
    const [fd, port] = native.listenTcp('127.0.0.1', 0, 16);
    const seen: RequestMessage[] = [];
    const parent = channel(5, 0, (rq) => {
      seen.push(rq);
      return rq.pass_listen_socket ? { reply: { pass_listen_socket: { fd } }, fd } : {};
    });
    const names = epochSockets(socketPath, 5, 1);
    // The probe sits where the next epoch's replies would go, so it would see any answer.
    const probe = prober(names.ownChild);
    try {
      const ask = { request: { pass_listen_socket: { address: `tcp://127.0.0.1:${port}` } } };
      const envoyStyle = encodeMessage(ask)[0]!; // framed as Envoy frames it, no seal
      const declares1MiB = Buffer.alloc(18);
      declares1MiB.writeBigUInt64BE(1n << 20n, 0);
      let sent = 0;
      const send = async (d: Buffer) => (await probe.send(names.parentOfPrevious!, d), sent++);
      await send(envoyStyle);
      await send(declares1MiB);
      for (let i = 0; i < 200; i++) await send(randomBytes(1 + ((i * 37) % 4000)));
      for (const d of sealed(randomBytes(32), names.parentOfPrevious!, 1, ask)) await send(d); // another deployment's secret
      for (const d of sealed(secret, names.parentOfPrevious!, 7, ask)) await send(d); // sealed, but epoch 7 is not the next epoch
      for (const d of sealed(secret, names.parentOfPrevious!, 1, { request: { terminate: {} } })) await send(Buffer.concat([d, Buffer.from('x')])); // tampered
      await waitFor('every probe datagram to be refused', () => (parent.turnedAway.refused === sent ? true : undefined));
      assert.deepEqual(seen, [], 'no request reached the epoch');
      assert.equal(probe.received.length, 0, 'nothing was sent back');
      assert.equal(parent.turnedAway.dropped, 0);
    } finally {
      probe.close();
    }
    // The real next epoch, right after the burst (in the probe's place once its socket has closed).
    const child = await waitFor('the probe to let go of the next epoch\'s name', () => {
      try {
        return channel(5, 1);
      } catch {
        return undefined;
      }
    });
    try {
      const got = await child.request({ pass_listen_socket: { address: `tcp://127.0.0.1:${port}` } }, { timeoutMs: 2000, expectReply: true });
      assert.ok(got.fd >= 0);
      native.closeFd(got.fd);
      assert.equal(seen.length, 1);
    } finally {
      child.close();
      parent.close();
      native.closeFd(fd);
    }
  });

  it('a request played again is refused', async () => {
    const seen: RequestMessage[] = [];
    const parent = channel(6, 0, (rq) => (seen.push(rq), {}));
    const names = epochSockets(socketPath, 6, 1);
    const probe = prober(names.ownChild);
    try {
      const [once] = sealed(secret, names.parentOfPrevious!, 1, { request: { drain_listeners: {} } });
      await probe.send(names.parentOfPrevious!, once!);
      await probe.send(names.parentOfPrevious!, once!);
      await waitFor('the copy to be refused', () => (parent.turnedAway.refused === 1 ? true : undefined));
      await waitFor('the request to be answered', () => (seen.length === 1 ? true : undefined));
    } finally {
      probe.close();
      parent.close();
    }
  });

  it('a late reply to a request that timed out is not taken for the answer to the next one', async () => {
    let release: (() => void) | undefined;
    const parent = channel(7, 0, async (rq) => {
      if (rq.stats) {
        await new Promise<void>((resolve) => (release = resolve));
        return { reply: { stats: { memory_allocated: 1, num_connections: 0, counter_deltas: {}, gauges: {} } } };
      }
      return { reply: { shutdown_admin: { original_start_time_unix_seconds: 1, original_start_time_unix_ms: 1234 } } };
    });
    const child = channel(7, 1);
    try {
      await assert.rejects(child.request({ stats: {} }, { timeoutMs: 100, expectReply: true }), /no reply/);
      const next = child.request({ shutdown_admin: {} }, { timeoutMs: 5000, expectReply: true });
      await waitFor('the parent to hold the stats request', () => release);
      release!();
      const { reply } = await next;
      assert.equal(reply?.shutdown_admin?.original_start_time_unix_ms, 1234);
      assert.equal(reply?.stats, undefined);
      assert.equal(child.turnedAway.dropped, 1);
    } finally {
      child.close();
      parent.close();
    }
  });

  it('answers a few requests at a time and drops the rest, so a flood cannot queue replies without bound', async () => {
    const releases: (() => void)[] = [];
    const parent = channel(8, 0, (rq) => (rq.stats ? new Promise((resolve) => releases.push(() => resolve({})) ) : {}));
    const names = epochSockets(socketPath, 8, 1);
    const probe = prober(names.ownChild);
    try {
      for (let i = 0; i < 50; i++) for (const d of sealed(secret, names.parentOfPrevious!, 1, { request: { stats: {} } })) await probe.send(names.parentOfPrevious!, d);
      await waitFor('the flood to be taken in', () => (parent.turnedAway.dropped === 42 ? true : undefined));
      assert.equal(releases.length, 1, 'one request is being answered; seven wait');
      while (releases.length) releases.shift()!();
      await waitFor('the waiting requests to be answered', () => (releases.length === 0 && parent.turnedAway.dropped === 42 ? true : undefined));
    } finally {
      probe.close();
      parent.close();
    }
  });
});
