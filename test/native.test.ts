import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { native } from '../shared/native/index.js';
import { repoRoot, tempDir } from './helpers/cli.js';
import { waitFor } from './helpers/proxy.js';

const addon = join(repoRoot, 'build', 'native.node');
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
});
const tmp = tempDir();
after(() => tmp.cleanup());

/** Spawns a fixture and resolves with its first stdout line that matches `pattern`. */
function start(script: string, args: string[], pattern: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, [join(repoRoot, 'test/fixtures', script), addon, ...args], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const match = pattern.exec(out);
      if (match) resolve({ child, match });
    });
    child.on('exit', (code) => reject(new Error(`${script} exited (${code}) before printing ${pattern}: ${out}`)));
  });
}

function get(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = createConnection(port, '127.0.0.1', () => c.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    let body = '';
    c.on('data', (d) => (body += d));
    c.on('end', () => resolve(body));
    c.on('error', reject);
  });
}

describe('native sockets addon', () => {
  it('passes a listening TCP socket between two unrelated processes, which then serves it', async () => {
    const id = `${process.pid}_${Date.now()}`;
    const holder = await start('fd-holder.mjs', [`@proxy_test_holder_${id}`], /ready (\d+)/);
    const port = Number(holder.match[1]);
    // Connections made before any process accepts wait in the socket's queue: nothing polls it yet.
    const early = get(port);
    const receiver = await start('fd-receiver.mjs', [`@proxy_test_holder_${id}`, `@proxy_test_receiver_${id}`], /serving (\d+) fd=true/);
    assert.equal(Number(receiver.match[1]), port);
    assert.match(await early, new RegExp(`^HTTP/1.1 200 OK[\\s\\S]*served by ${receiver.child.pid}`));
    assert.match(await get(port), new RegExp(`served by ${receiver.child.pid}`));
  });

  it('reports the real port of a port-0 listener, and errno codes on failure', () => {
    const [fd, port] = native.listenTcp('127.0.0.1', 0, 16);
    try {
      assert.ok(port > 0);
      assert.throws(() => native.listenTcp('127.0.0.1', port, 16), (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE' && err.syscall === 'bind');
    } finally {
      native.closeFd(fd);
    }
    assert.throws(() => native.listenTcp('localhost', 0, 16), /IPv4 or IPv6 literal/);
  });

  it('binds IPv6 and Unix listeners, with a file mode for file-system paths', () => {
    const [fd6, port6] = native.listenTcp('::1', 0, 16);
    assert.ok(port6 > 0);
    native.closeFd(fd6);
    const path = join(tmp.dir, 'listener.sock');
    const fd = native.listenUnix(path, 16, 0o660);
    assert.equal(statSync(path).mode & 0o777, 0o660);
    native.closeFd(fd);
    const abstract = native.listenUnix(`@proxy_test_${process.pid}`, 16, 0);
    native.closeFd(abstract);
    assert.ok(!existsSync(`@proxy_test_${process.pid}`));
  });

  it('sends datagrams with and without descriptors, and refuses an absent peer', async () => {
    const got = new Promise<[string, number]>((resolve) => {
      const a = native.dgramOpen(`@proxy_test_a_${process.pid}`, (data, fd) => {
        native.dgramClose(a);
        resolve([data.toString(), fd]);
      });
    });
    const b = native.dgramOpen(`@proxy_test_b_${process.pid}`, () => {});
    try {
      assert.throws(() => native.dgramSend(b, `@proxy_test_nobody_${process.pid}`, Buffer.from('x'), -1), (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED');
      assert.equal(native.dgramSend(b, `@proxy_test_a_${process.pid}`, Buffer.from('hello'), -1), 5);
      assert.deepEqual(await got, ['hello', -1]);
    } finally {
      native.dgramClose(b);
    }
  });
});

describe('shared memory (mapShared)', () => {
  it('maps one file into two processes: what one writes, the other reads', async () => {
    const path = join(tmp.dir, 'counters');
    const mine = new Int32Array(native.mapShared(path, 64, true));
    assert.equal((statSync(path).mode & 0o777).toString(8), '600');
    mine[1] = 7;
    const child = spawn(
      process.execPath,
      ['-e', `const a = new Int32Array(require(${JSON.stringify(addon)}).mapShared(${JSON.stringify(path)}, 64, false)); a[2] = a[1] * 6; console.log('done')`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(mine[2], 42);
  });

  it('refuses to create an existing file, or to open one smaller than asked, with errno codes', () => {
    const path = join(tmp.dir, 'small');
    native.mapShared(path, 16, true);
    assert.throws(() => native.mapShared(path, 16, true), { code: 'EEXIST' });
    assert.throws(() => native.mapShared(path, 32, false), { code: 'EINVAL' });
    assert.throws(() => native.mapShared(join(tmp.dir, 'absent'), 16, false), { code: 'ENOENT' });
  });
});

describe('mallocTrim', () => {
  it("gives a fragmented C heap's free pages back to the kernel", () => {
    // In a process of its own: 40,000 blocks of 1000 bytes from malloc (Buffers that are not
    // pooled), all but every 64th freed. The free runs lie between live blocks, where free()
    // cannot give them back; malloc_trim gives back the whole pages among them.
    const script = `
      const native = require(${JSON.stringify(addon)});
      const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]);
      let blocks = Array.from({ length: 40000 }, () => Buffer.allocUnsafeSlow(1000).fill(1));
      blocks = blocks.filter((_, i) => i % 64 === 0);
      // V8 frees the blocks' memory as it sweeps, after the collection: the next turns see it done.
      globalThis.gc();
      setImmediate(() => setImmediate(() => {
        globalThis.gc();
        setImmediate(() => {
          const before = rss();
          const released = native.mallocTrim();
          process.stdout.write(JSON.stringify({ before, after: rss(), released, kept: blocks.length }));
        });
      }));
    `;
    const run = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const { before, after, released, kept } = JSON.parse(run.stdout) as { before: number; after: number; released: boolean; kept: number };
    assert.equal(kept, 625);
    // glibc only: elsewhere the addon says it released nothing, and nothing is measured.
    if (process.report?.getReport && (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime === undefined) {
      assert.equal(released, false);
      return;
    }
    assert.equal(released, true);
    assert.ok(before - after > 10 * 1024, `RSS ${before} kB before, ${after} kB after`);
  });
});

describe('randomFill', () => {
  it("fills a buffer of any size from the kernel's CSPRNG", () => {
    for (const size of [0, 1, 16, 2048, 1 << 20]) {
      const a = Buffer.alloc(size);
      const b = Buffer.alloc(size);
      native.randomFill(a);
      native.randomFill(b);
      if (size >= 16) assert.notDeepEqual(a, b, `two fills of ${size} bytes differ`);
      if (size >= 1 << 20) {
        // Every byte value turns up in a fill of a megabyte (one missing: odds of 256 in e^4096),
        // and no stretch is left as it was.
        assert.equal(new Set(a).size, 256);
        assert.ok(!a.includes(Buffer.alloc(64)), 'no run of 64 zero bytes');
      }
    }
    assert.throws(() => native.randomFill('not a buffer' as unknown as Uint8Array), TypeError);
  });
});

describe('tickers (startTicker)', () => {
  it('moves a counter and stamps the clock every tick, and watches counters that move', async () => {
    const shared = new Int32Array(new SharedArrayBuffer(8));
    const stamp = new Float64Array(1);
    const seen = new Int32Array(2);
    const last = new Float64Array(2);
    const beating = native.startTicker({ intervalMs: 2, beat: shared.subarray(0, 1), stamp });
    const watching = native.startTicker({ intervalMs: 2, thresholdMs: 60_000, counts: shared, seen, last });
    try {
      await waitFor('the beat to be counted and seen', () => shared[0]! >= 3 && seen[0]! >= 2 && last[0]! > 0);
      assert.equal(shared[1], 0);
      assert.equal(last[1], 0, 'a counter that never moved is not watched');
      assert.ok(Math.abs(stamp[0]! - Date.now()) < 5_000, `stamp ${stamp[0]} against ${Date.now()}`);
    } finally {
      native.stopTicker(beating);
      native.stopTicker(watching);
      native.stopTicker(watching); // twice: nothing more
    }
    const stopped = shared[0]!;
    // A pause that proves an absence: a stopped ticker moves nothing.
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(shared[0], stopped);
  });

  it('calls back when its own tick is late, and once more when that ends', async () => {
    const calls: number[] = [];
    const ticker = native.startTicker({ intervalMs: 5, thresholdMs: 40 }, (_now, ownLate) => calls.push(ownLate));
    try {
      // The loop held for 150 ms: the tick after it is late.
      const until = performance.now() + 150;
      while (performance.now() < until);
      await waitFor('two calls', () => calls.length >= 2);
      assert.ok(calls[0]! > 40, `late by ${calls[0]} ms`);
      assert.ok(calls[1]! <= 40, `then on time (${calls[1]} ms)`);
    } finally {
      native.stopTicker(ticker);
    }
  });

  it('calls back while a watched counter stands still, not while it is unwatched', async () => {
    const counts = new Int32Array(1);
    const seen = new Int32Array(1);
    const last = new Float64Array(1);
    const late: number[] = [];
    const ticker = native.startTicker({ intervalMs: 5, thresholdMs: 40, counts, seen, last }, (now) => {
      if (last[0]! > 0) late.push(now - last[0]!);
    });
    try {
      // A pause that proves an absence: a counter that has never moved is not late.
      await new Promise((r) => setTimeout(r, 80));
      assert.deepEqual(late, []);
      Atomics.add(counts, 0, 1);
      await waitFor('the counter to be late', () => late.length > 0);
      assert.ok(late[0]! > 40, `late by ${late[0]} ms`);
      assert.equal(seen[0], 1);
    } finally {
      native.stopTicker(ticker);
    }
  });

  it('refuses bad options and handles that are not its own', () => {
    assert.throws(() => native.startTicker({ intervalMs: 0 }), TypeError);
    assert.throws(() => native.startTicker({ intervalMs: 5, beat: new Float64Array(1) as unknown as Int32Array }), TypeError);
    assert.throws(() => native.startTicker({ intervalMs: 5, counts: new Int32Array(2), seen: new Int32Array(1), last: new Float64Array(2) }), TypeError);
    assert.throws(() => native.stopTicker({} as never), TypeError);
  });
});
