import { createRequire } from 'node:module';
import { join } from 'node:path';
import { packageRoot } from '../paths.js';

/**
 * The native addon (shared/native/*.c, built into build/native.node by `npm ci`).
 * Errors thrown by it carry `code` (an errno name such as EADDRINUSE) and `syscall`.
 */

/** An AF_UNIX datagram socket owned by the addon; opaque to JavaScript. */
export type DgramHandle = { readonly __brand: 'DgramHandle' };

/** A ticker started by startTicker (see shared/native/tickers.c); opaque to JavaScript. */
export type TickerHandle = { readonly __brand: 'TickerHandle' };
export type AcceptHandle = { readonly __brand: 'AcceptHandle' };

export interface TickerOptions {
  /** How often it ticks. */
  intervalMs: number;
  /** `onLate` is called when a tick, or a watched counter, is later than this (0 or absent: never). */
  thresholdMs?: number;
  /** Element 0 is incremented every tick (atomically). */
  beat?: Int32Array;
  /** Element 0 is set to Date.now() every tick. */
  stamp?: Float64Array;
  /** Counters watched: one that moved is copied to `seen`, and the tick's time written to `last` (0 in `last`: not watched). */
  counts?: Int32Array;
  seen?: Int32Array;
  last?: Float64Array;
}

interface NativeAddon {
  /**
   * A listening TCP socket on an IP literal; returns its descriptor and bound port (real even for
   * port 0). Each option is [state (0 before bind, 1 after bind, 2 listening), level, name, value].
   */
  listenTcp(host: string, port: number, backlog: number, options?: [number, number, number, number | Buffer][]): [fd: number, port: number];
  /** A bound UDP socket on an IP literal (options as listenTcp's, states 0 and 1); returns its descriptor and bound port. */
  bindUdp(host: string, port: number, options?: [number, number, number, number | Buffer][]): [fd: number, port: number];
  /** A listening Unix stream socket ("@name" is abstract); mode 0 keeps the file's default mode. */
  listenUnix(path: string, backlog: number, mode: number): number;
  closeFd(fd: number): void;
  /** The port an IP socket is bound to (0 for a Unix socket). */
  localPort(fd: number): number;
  /** SO_KEEPALIVE on a connected TCP socket, with TCP_KEEPCNT, TCP_KEEPIDLE and TCP_KEEPINTVL for each above 0 (seconds for the last two). */
  tcpKeepalive(fd: number, probes: number, idleS: number, intervalS: number): void;
  /** One sd_notify(3) datagram to NOTIFY_SOCKET (a path, or "@name" abstract, unpadded). */
  sdNotify(socketPath: string, message: string): number;
  /**
   * Binds a datagram socket; `onMessage` gets each datagram, the descriptor it carried (-1 if none),
   * and its sender's uid and pid as the kernel reports them (uid -1: none, or the datagram was cut short).
   */
  dgramOpen(address: string, onMessage: (data: Buffer, fd: number, uid: number, pid: number) => void): DgramHandle;
  /** Sends one datagram, with `fd` as SCM_RIGHTS unless it is -1. Throws EAGAIN/ECONNREFUSED for the caller to retry. */
  dgramSend(handle: DgramHandle, dest: string, data: Buffer, fd: number): number;
  dgramClose(handle: DgramHandle): void;
  /** A connected AF_UNIX datagram pair (close-on-exec, non-blocking): one end for a parent, one for the child it forks. */
  socketPair(): [number, number];
  /** Polls an inherited socketPair() end like dgramOpen's socket (SO_PASSCRED set: each datagram's sender is known). */
  dgramAdopt(fd: number, onMessage: (data: Buffer, fd: number, uid: number, pid: number) => void): DgramHandle;
  /** One datagram on a socketPair() end carrying `fd` as SCM_RIGHTS. Throws EAGAIN when the peer's queue is full. */
  sendFd(socket: number, data: Buffer, fd: number): number;
  /**
   * `path` mapped MAP_SHARED as an ArrayBuffer of `size` bytes: created (exclusively, sized, mode
   * 600) with `create`, else opened (it must be at least `size` bytes). Unmapped when collected.
   */
  mapShared(path: string, size: number, create: boolean): ArrayBuffer;
  /** glibc's malloc_trim(0): the heap's free pages go back to the kernel. True if any did; false where the C library is not glibc. */
  mallocTrim(): boolean;
  /** node::LowMemoryNotification(): V8 collects all garbage and shrinks its heap's spaces to what they hold (a pause of ~10-20 ms for a small heap). */
  lowMemory(): void;
  /** Fills `buffer` from the kernel's CSPRNG (getrandom(2)). */
  randomFill(buffer: Uint8Array): void;
  /**
   * A repeating timer on the event loop whose ticks run no JavaScript (shared/native/tickers.c):
   * each tick does what `options` says; `onLate(now, ownLate)` is called when the tick itself or a
   * watched counter is late past `thresholdMs`, and once more when that ends. `now` and `last` are
   * milliseconds on a monotonic clock of their own. It does not keep the loop alive.
   */
  startTicker(options: TickerOptions, onLate?: (now: number, ownLate: number) => void): TickerHandle;
  stopTicker(handle: TickerHandle): void;
  /**
   * Polls the listening socket `fd` (owned from now on) and accepts at most `max` connections each
   * time it is readable; `onAccept` gets their descriptors, and an errno (0: none) when accepting
   * failed otherwise than with EAGAIN (EMFILE, …). What is left is accepted at the next turn of the loop.
   */
  acceptOpen(fd: number, max: number, onAccept: (fds: number[], errno: number) => void): AcceptHandle;
  /** Stops accepting and closes the listening socket. */
  acceptClose(handle: AcceptHandle): void;
  /** Stops accepting (what comes waits in the backlog), or starts again; the socket stays open. */
  acceptPause(handle: AcceptHandle, paused: boolean): void;
}

const addonPath = join(packageRoot, 'build', 'native.node');

function load(): NativeAddon {
  try {
    return createRequire(import.meta.url)(addonPath) as NativeAddon;
  } catch (err) {
    throw new Error(`the native addon ${addonPath} could not be loaded (run \`npm ci\` or \`npm run build\`): ${(err as Error).message}`);
  }
}

export const native: NativeAddon = load();
