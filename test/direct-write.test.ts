// Strings and buffers written straight to a socket's handle (worker/http1/direct-write.ts), on real
// sockets: they arrive whole and in order with writes that went through the Writable (also when
// the kernel takes one only in part), the byte count and the idle timer are kept as socket.write
// keeps them, a buffer's callback comes once the kernel has it all, and a write to a reset
// connection destroys the socket with the write's error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { writeBuffer, writeLatin1 } from '../worker/http1/direct-write.js';

/** A connected pair: `client` (written to) and the server's end, paused until the test reads it. */
async function pair(): Promise<{ client: Socket; peer: Socket; close(): Promise<void> }> {
  const server: Server = createServer();
  const accepted = new Promise<Socket>((resolve) => {
    server.once('connection', (s: Socket) => {
      s.pause();
      resolve(s);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  client.on('error', () => {});
  await new Promise<void>((r) => client.once('connect', r));
  const peer = await accepted;
  peer.on('error', () => {});
  return {
    client,
    peer,
    close: () => {
      client.destroy();
      peer.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

function readAll(socket: Socket, bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      got += d.length;
      if (got >= bytes) resolve(Buffer.concat(chunks));
    });
    socket.on('error', reject);
    socket.resume();
  });
}

test('a write goes to the handle: counted, and in order with writes through the Writable before and after it', async () => {
  const p = await pair();
  try {
    writeLatin1(p.client, 'GET / HTTP/1.1\r\n\r\n');
    assert.equal(p.client.bytesWritten, 18);
    assert.equal(p.client.writableLength, 0, 'the Writable never held it');
    p.client.cork();
    p.client.write('first,');
    writeLatin1(p.client, 'second,'); // the Writable holds bytes: behind them, through it
    assert.equal(p.client.writableLength, 13);
    p.client.uncork();
    writeLatin1(p.client, 'third');
    assert.equal((await readAll(p.peer, 36)).toString('latin1'), 'GET / HTTP/1.1\r\n\r\nfirst,second,third');
    assert.equal(p.client.bytesWritten, 36);
  } finally {
    await p.close();
  }
});

test('a string the kernel takes only in part is finished by libuv, in order with later writes', async () => {
  const p = await pair();
  try {
    // 8 MB to a peer that reads nothing yet: more than the kernel's buffers hold.
    const big = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(233_017);
    writeLatin1(p.client, big);
    writeLatin1(p.client, 'tail');
    p.client.write('end');
    const all = (await readAll(p.peer, big.length + 7)).toString('latin1');
    assert.equal(all.length, big.length + 7);
    assert.ok(all.startsWith(big), 'the large write arrived whole');
    assert.ok(all.endsWith('tailend'), 'and before what was written after it');
  } finally {
    await p.close();
  }
});

test("a write refreshes the socket's idle timer, as socket.write does", async () => {
  const p = await pair();
  try {
    let timedOut = false;
    p.client.setTimeout(200, () => (timedOut = true));
    // Writes every 50 ms, six times: each restarts the 200 ms idle time, so no timeout until they stop.
    let writes = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        assert.equal(timedOut, false, `timed out after ${writes} writes`);
        writeLatin1(p.client, 'x');
        if (++writes === 6) {
          clearInterval(timer);
          resolve();
        }
      }, 50);
    });
    await new Promise<void>((resolve) => p.client.once('timeout', resolve));
    assert.equal(writes, 6);
  } finally {
    await p.close();
  }
});

test('a write to a connection the peer reset destroys the socket with the error', async () => {
  const p = await pair();
  try {
    const closed = new Promise<void>((resolve) => p.client.once('close', () => resolve()));
    p.peer.resetAndDestroy();
    await new Promise<void>((resolve) => p.peer.once('close', () => resolve()));
    // The kernel may take the first write after the reset; a later one fails.
    for (let i = 0; i < 20 && !p.client.destroyed; i++) {
      writeLatin1(p.client, 'after the reset');
      await new Promise((resolve) => setImmediate(resolve));
    }
    await closed;
    const err = p.client.errored as NodeJS.ErrnoException | null;
    assert.ok(err, 'destroyed with an error');
    assert.match(String(err.code), /^(EPIPE|ECONNRESET)$/);
    assert.equal(err.syscall, 'write', 'it was a write that failed');
  } finally {
    await p.close();
  }
});

test("a buffer goes to the handle, counted, and its callback comes on a later tick, once the kernel has it", async () => {
  const p = await pair();
  try {
    let calledBack = false;
    const done = new Promise<Error | null | undefined>((resolve) =>
      writeBuffer(p.client, Buffer.from('HTTP/1.1 200 OK\r\n\r\n'), (err) => {
        calledBack = true;
        resolve(err);
      }),
    );
    assert.equal(calledBack, false, 'not from inside the write, as the Writable would not');
    assert.equal(p.client.bytesWritten, 19);
    assert.equal(p.client.writableLength, 0, 'the Writable never held it');
    p.client.write('after');
    assert.equal(await done, undefined);
    assert.equal((await readAll(p.peer, 24)).toString('latin1'), 'HTTP/1.1 200 OK\r\n\r\nafter');
  } finally {
    await p.close();
  }
});

test('a buffer the kernel takes only in part calls back once libuv has written it all, before what came after it', async () => {
  const p = await pair();
  try {
    const big = Buffer.alloc(8 * 1024 * 1024, 'x');
    let calledBack = false;
    const written = new Promise<Error | null | undefined>((resolve) =>
      writeBuffer(p.client, big, (err) => {
        calledBack = true;
        resolve(err);
      }),
    );
    p.client.write('tail');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(calledBack, false, 'the peer has read nothing yet: the kernel cannot have it all');
    const all = await readAll(p.peer, big.length + 4);
    assert.equal(all.length, big.length + 4);
    assert.ok(all.subarray(0, big.length).equals(big), 'the large write arrived whole');
    assert.equal(all.subarray(big.length).toString(), 'tail', 'and before what was written after it');
    assert.equal(await written, undefined);
  } finally {
    await p.close();
  }
});

test("a buffer written to a connection the peer reset calls back with the write's error", async () => {
  const p = await pair();
  try {
    p.peer.resetAndDestroy();
    await new Promise<void>((resolve) => p.peer.once('close', () => resolve()));
    // The kernel may take the first write after the reset; a later one fails.
    let failed: Error | null | undefined;
    for (let i = 0; i < 20 && !failed; i++) failed = await new Promise<Error | null | undefined>((resolve) => writeBuffer(p.client, Buffer.from('after the reset'), resolve));
    assert.ok(failed, 'a write failed');
    assert.match(String((failed as NodeJS.ErrnoException).code), /^(EPIPE|ECONNRESET|ERR_STREAM_DESTROYED)$/);
    assert.ok(p.client.destroyed, 'and the socket is destroyed');
  } finally {
    await p.close();
  }
});
