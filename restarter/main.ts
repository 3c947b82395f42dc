import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { native, type DgramHandle } from '../shared/native/index.js';

/**
 * `proxy-hot-restarter <start script>`: Envoy's hot-restarter.py, with its usage, in TypeScript.
 * It runs the start script with RESTART_EPOCH=0; SIGHUP runs it again with the next epoch (the
 * script passes `--restart-epoch $RESTART_EPOCH`); SIGUSR1 is forwarded to every epoch;
 * SIGTERM/SIGINT stop them all (SIGKILL after 30 s). An epoch exiting 0 is a parent that drained.
 *
 * Where it differs, on purpose:
 * - An epoch that fails before it serves does not take the healthy one down (Envoy #4797): the
 *   failure is logged, the previous epoch keeps serving, and the next SIGHUP retries the same epoch.
 * - A SIGHUP while an epoch is still starting waits for it, instead of failing with "previous
 *   process is still initializing".
 * - Its epochs stop when it dies, however it dies (they watch PROXY_RESTARTER_PID), as Envoy's
 *   epochs do through PR_SET_PDEATHSIG.
 * - It knows when an epoch serves: each epoch reports READY=1 on a NOTIFY_SOCKET the restarter
 *   gives it. Under systemd (`Type=notify`), the restarter itself reports READY=1, RELOADING=1
 *   and STATUS= to systemd.
 * - `proxy-hot-restarter --reload <pid>` asks the restarter of that pid for a restart over its
 *   control socket (abstract, named by its pid) and returns once the new epoch serves (exit 0) or
 *   has failed with the old one still serving (exit 1): systemd 252 has no Type=notify-reload,
 *   and an ExecReload that only signals returns at once, so this is what makes `systemctl
 *   reload` wait for the new epoch.
 */

const TERM_WAIT_MS = 30_000;
const READY_TIMEOUT_MS = 60_000;

/** The restarter's control socket: in the abstract namespace, named by its pid (nothing on disk to clean up). */
export function controlSocketPath(pid: number): string {
  return `\0proxy-hot-restarter-${pid}`;
}

/** A `--reload` waiting for the outcome of a restart (its epoch known once that restart starts). */
interface Waiter {
  socket: Socket;
  epoch: number | undefined;
}

interface Epoch {
  epoch: number;
  child: ChildProcess;
  ready: boolean;
  readyTimer?: NodeJS.Timeout;
}

function logLine(level: string, message: string): void {
  const d = new Date();
  const stamp = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')} ${d.toTimeString().slice(0, 8)}.${String(d.getMilliseconds()).padStart(3, '0')}`;
  process.stdout.write(`[${stamp}][${process.pid}][${level}][restarter] ${message}\n`);
}

function notifySystemd(fields: Record<string, string | number>): void {
  const socket = process.env.NOTIFY_SOCKET;
  if (!socket) return;
  try {
    native.sdNotify(socket, Object.entries(fields).map(([k, v]) => `${k}=${v}`).join('\n'));
  } catch (err) {
    logLine('warning', `sd_notify to ${socket} failed: ${(err as Error).message}`);
  }
}

const USAGE =
  'usage: proxy-hot-restarter <start script>\n  The script is run with RESTART_EPOCH set and no arguments; it must pass --restart-epoch "$RESTART_EPOCH".\n' +
  '       proxy-hot-restarter --reload <restarter pid>\n  Restarts and returns once the new epoch serves (0), or has failed with the old one serving (1).\n';

export function main(args: string[]): void {
  if (args[0] === '--reload') return reload(args);
  const script = args[0] ?? '';
  if (!script || args.length !== 1) {
    process.stderr.write(USAGE);
    process.exit(1);
  }
  const dir = mkdtempSync(join(tmpdir(), 'proxy-restarter-'));
  const notifyPath = join(dir, 'notify');
  const epochs: Epoch[] = [];
  let nextEpoch = 0;
  let starting: Epoch | undefined;
  let pendingRestart = false;
  let stopping = false;

  const notifySocket: DgramHandle = native.dgramOpen(notifyPath, (data, fd) => {
    if (fd >= 0) native.closeFd(fd);
    const fields = new Map(data.toString().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const));
    const e = epochs.find((x) => String(x.epoch) === fields.get('PROXY_EPOCH'));
    if (e && fields.get('READY') === '1') ready(e);
  });

  const waiters: Waiter[] = [];
  /** The outcome of epoch `epoch`'s start (undefined: of a restart that will not happen now) to whoever waits for it. */
  const settle = (epoch: number | undefined, line: string) => {
    for (const w of waiters.filter((x) => x.epoch === epoch)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.socket.end(`${line}\n`);
    }
  };
  const control = createServer((socket) => {
    socket.on('error', () => undefined);
    let asked = '';
    socket.on('data', (d) => {
      asked += d;
      if (!asked.includes('\n')) return;
      if (asked.startsWith('reload\n')) requestRestart(socket);
      else socket.end('failed: unknown request\n');
    });
  });
  control.on('error', (err) => logLine('warning', `no control socket (--reload will not reach this restarter): ${err.message}`));
  control.listen(controlSocketPath(process.pid));
  control.unref();

  const cleanUp = () => {
    native.dgramClose(notifySocket);
    control.close();
    rmSync(dir, { recursive: true, force: true });
  };

  function ready(e: Epoch): void {
    if (e.ready) return;
    e.ready = true;
    clearTimeout(e.readyTimer);
    logLine('info', `epoch ${e.epoch} (pid ${e.child.pid}) is serving`);
    if (starting === e) {
      starting = undefined;
      nextEpoch = e.epoch + 1;
      notifySystemd({ READY: 1, STATUS: `epoch ${e.epoch} serving` });
      settle(e.epoch, `ready: epoch ${e.epoch} (pid ${e.child.pid}) is serving`);
      if (pendingRestart) {
        pendingRestart = false;
        startEpoch();
      }
    }
  }

  function startEpoch(): void {
    const epoch = nextEpoch;
    logLine('info', `starting epoch ${epoch}: ${script}`);
    // Each epoch in its own process group: a signal meant for the restarter's group (a shell job,
    // Ctrl-C) reaches only the restarter, which decides what the epochs get.
    const child: ChildProcess = spawn(script, [], { stdio: 'inherit', detached: true, env: { ...process.env, RESTART_EPOCH: String(epoch), NOTIFY_SOCKET: notifyPath, PROXY_RESTARTER_PID: String(process.pid) } });
    const e: Epoch = { epoch, child, ready: false };
    epochs.push(e);
    starting = e;
    for (const w of waiters) w.epoch ??= epoch;
    e.readyTimer = setTimeout(() => {
      logLine('warning', `epoch ${epoch} did not report READY within ${READY_TIMEOUT_MS / 1000} s; taking it as serving`);
      ready(e);
    }, READY_TIMEOUT_MS);
    child.on('error', (err) => logLine('error', `cannot run ${script}: ${err.message}`));
    child.on('exit', (code, signal) => exited(e, code, signal));
  }

  function exited(e: Epoch, code: number | null, signal: NodeJS.Signals | null): void {
    clearTimeout(e.readyTimer);
    epochs.splice(epochs.indexOf(e), 1);
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (stopping) {
      logLine('info', `epoch ${e.epoch} (pid ${e.child.pid}) exited with ${how}`);
    } else if (code === 0) {
      logLine('info', `epoch ${e.epoch} (pid ${e.child.pid}) exited with code=0`);
    } else if (!e.ready) {
      // A new epoch that never served: the one before keeps serving; the next SIGHUP retries this epoch number.
      logLine('error', `epoch ${e.epoch} (pid ${e.child.pid}) failed to start (${how})${epochs.length ? `; epoch ${epochs[epochs.length - 1]!.epoch} keeps serving` : ''}`);
      if (starting === e) starting = undefined;
      if (epochs.length) notifySystemd({ READY: 1, STATUS: `restart to epoch ${e.epoch} failed (${how}); epoch ${epochs[epochs.length - 1]!.epoch} serving` });
      const keeps = epochs.length ? `; epoch ${epochs[epochs.length - 1]!.epoch} keeps serving` : '';
      settle(e.epoch, `failed: epoch ${e.epoch} failed to start (${how})${keeps}`);
      // The restarts queued behind it are dropped with it.
      settle(undefined, `failed: the restart before it (epoch ${e.epoch}) failed to start (${how})${keeps}`);
      pendingRestart = false;
    } else {
      logLine('error', `epoch ${e.epoch} (pid ${e.child.pid}) exited abnormally (${how}); force killing all epochs and exiting`);
      for (const other of epochs) other.child.kill('SIGKILL');
      cleanUp();
      process.exit(1);
    }
    if (epochs.length === 0 && !stopping) {
      logLine('info', 'exiting due to lack of epochs');
      cleanUp();
      process.exit(e.ready || code === 0 ? 0 : 1);
    }
  }

  process.on('SIGHUP', () => {
    logLine('info', 'got SIGHUP');
    requestRestart();
  });

  /** A restart (SIGHUP, or a --reload on the control socket, which then hears its outcome). */
  function requestRestart(waiter?: Socket): void {
    if (stopping) {
      waiter?.end('failed: the restarter is stopping\n');
      return;
    }
    if (waiter) {
      logLine('info', 'got a reload request');
      waiters.push({ socket: waiter, epoch: undefined });
    }
    if (starting) {
      pendingRestart = true;
      logLine('info', `epoch ${starting.epoch} is still starting; the restart waits for it`);
      return;
    }
    // CLOCK_MONOTONIC in µs, which systemd wants with RELOADING=1 (process.hrtime is that clock).
    notifySystemd({ RELOADING: 1, STATUS: `starting epoch ${nextEpoch}`, MONOTONIC_USEC: String(process.hrtime.bigint() / 1000n) });
    startEpoch();
  }
  process.on('SIGUSR1', () => {
    logLine('info', 'got SIGUSR1; forwarding');
    for (const e of epochs) e.child.kill('SIGUSR1');
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      logLine('info', `got ${signal}; terminating ${epochs.length} epoch(s)`);
      for (const w of waiters.splice(0)) w.socket.end('failed: the restarter is stopping\n');
      notifySystemd({ STOPPING: 1 });
      const codes: (number | null)[] = [];
      let left = epochs.length;
      const finish = () => {
        const clean = codes.every((c) => c === 0);
        logLine('info', clean ? 'all epochs exited cleanly' : 'not every epoch exited cleanly');
        cleanUp();
        process.exit(clean ? 0 : 1);
      };
      if (left === 0) finish();
      const killer = setTimeout(() => {
        for (const e of epochs) e.child.kill('SIGKILL');
      }, TERM_WAIT_MS);
      for (const e of [...epochs]) {
        e.child.once('exit', (code) => {
          codes.push(code);
          if (--left === 0) {
            clearTimeout(killer);
            finish();
          }
        });
        e.child.kill('SIGTERM');
      }
    });
  }
  startEpoch();
}

/** `--reload <pid>`: asks that restarter for a restart and waits for its outcome (see the header). */
function reload(args: string[]): void {
  const pid = Number(args[1]);
  if (args.length !== 2 || !Number.isInteger(pid) || pid <= 0) {
    process.stderr.write(USAGE);
    process.exit(1);
  }
  let answer = '';
  const socket = createConnection(controlSocketPath(pid));
  socket.setEncoding('utf8');
  socket.on('connect', () => socket.write('reload\n'));
  socket.on('data', (d) => (answer += d));
  socket.on('error', (err) => {
    process.stderr.write(`proxy-hot-restarter --reload: no restarter answers for pid ${pid} (${(err as NodeJS.ErrnoException).code ?? err.message})\n`);
    process.exit(1);
  });
  socket.on('end', () => {
    const line = answer.trim();
    if (line.startsWith('ready')) {
      process.stdout.write(`${line}\n`);
      process.exit(0);
    }
    process.stderr.write(`${line || 'failed: the restarter closed without an answer'}\n`);
    process.exit(1);
  });
}
