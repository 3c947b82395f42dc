import { getLogger } from './log/logger.js';
import { native, type DgramHandle } from './native/index.js';

/**
 * Every descriptor a worker gets from the supervisor: a datagram pair made for each worker at
 * fork (the worker inherits one end, its only descriptor beyond stdio and IPC), on which the
 * supervisor sends the shared-memory regions by name and each listening socket with its id, as
 * SCM_RIGHTS. So a worker can be forked before there is anything to give it (see
 * supervisor/spares.ts). The worker takes a socket by id when a listener names it, and a region
 * by name at init; a message and its descriptor travel on two channels, so either may arrive
 * first. Only the parent that forked the worker holds the other end, and the kernel's
 * credentials say so.
 */

const log = getLogger('main', import.meta.url);
/** How long a listener waits for its socket (or init for a region) before it is reported as missing. */
const TAKE_TIMEOUT_MS = 10_000;
/** The first word of a region's datagram (a socket's is its numeric id). */
const REGION = 'region';

/** The supervisor's end for one worker process. */
export class SocketChannelParent {
  readonly childEnd: number;
  private readonly mine: number;
  private closed = false;
  private childEndReleased = false;

  constructor() {
    [this.mine, this.childEnd] = native.socketPair();
  }

  /** After the fork: the child has its own copy of its end. */
  releaseChildEnd(): void {
    if (this.childEndReleased) return;
    this.childEndReleased = true;
    native.closeFd(this.childEnd);
  }

  /** Sends one of the `count` descriptors of socket `id` this worker serves. */
  send(id: number, fd: number, count = 1): void {
    this.deliver(`${id} ${count}`, fd, `socket ${id}`);
  }

  /** Sends a shared-memory region (`breakers`, `buckets`) by name. */
  sendRegion(name: string, fd: number): void {
    this.deliver(`${REGION} ${name}`, fd, `the ${name} region`);
  }

  /** One descriptor; retried shortly if the worker's queue is full. */
  private deliver(text: string, fd: number, what: string, attempt = 0): void {
    if (this.closed) return;
    try {
      native.sendFd(this.mine, Buffer.from(text), fd);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' && attempt < 100) setTimeout(() => this.deliver(text, fd, what, attempt + 1), 10).unref();
      // ECONNREFUSED: the worker is gone; its replacement gets every descriptor on a channel of its own.
      else if (code !== 'ECONNREFUSED') log.warn(`could not send ${what} to a worker: ${(err as Error).message}`);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    native.closeFd(this.mine);
  }
}

/**
 * The worker's end: the regions, and the descriptors of each socket, as they are sent.
 * A socket may come as several descriptors (reuse_port, or sockets a previous epoch passed);
 * each datagram says how many its socket has, and the socket is whole once they have all come.
 */
export class SocketInbox {
  private readonly fds = new Map<number, number[]>();
  /** Descriptors of sockets still arriving: how many each has, and those come so far. */
  private readonly arriving = new Map<number, { count: number; fds: number[] }>();
  private readonly waiting = new Map<number, (fds: number[]) => void>();
  private readonly regions = new Map<string, number>();
  private readonly regionWaiting = new Map<string, (fd: number) => void>();
  private handle: DgramHandle | undefined;

  constructor(channelFd: number) {
    if (channelFd < 0) return;
    this.handle = native.dgramAdopt(channelFd, (data, fd, uid, pid) => {
      if (fd < 0) return;
      if (pid !== process.ppid || uid !== process.getuid?.()) {
        native.closeFd(fd);
        log.warn(`a socket from pid ${pid} (not the supervisor) refused`);
        return;
      }
      const text = data.toString();
      if (text.startsWith(`${REGION} `)) {
        this.regionArrived(text.slice(REGION.length + 1), fd);
        return;
      }
      const [id, count] = text.split(' ').map(Number) as [number, number | undefined];
      const part = this.arriving.get(id) ?? { count: count || 1, fds: [] };
      part.fds.push(fd);
      if (part.fds.length < part.count) {
        this.arriving.set(id, part);
        return;
      }
      this.arriving.delete(id);
      const waiter = this.waiting.get(id);
      this.waiting.delete(id);
      if (waiter) waiter(part.fds);
      else this.fds.set(id, part.fds);
    });
  }

  /** The descriptors of socket `id` (given up to the caller: the inbox forgets them). */
  take(id: number): Promise<number[]> {
    const fds = this.fds.get(id);
    if (fds !== undefined) {
      this.fds.delete(id);
      return Promise.resolve(fds);
    }
    return awaitArrival(this.waiting, id, `socket ${id}`);
  }

  /** The descriptor of region `name` (given up to the caller). */
  takeRegion(name: string): Promise<number> {
    const fd = this.regions.get(name);
    if (fd !== undefined) {
      this.regions.delete(name);
      return Promise.resolve(fd);
    }
    return awaitArrival(this.regionWaiting, name, `the ${name} region`);
  }

  private regionArrived(name: string, fd: number): void {
    const waiter = this.regionWaiting.get(name);
    this.regionWaiting.delete(name);
    if (waiter) waiter(fd);
    else {
      const earlier = this.regions.get(name);
      if (earlier !== undefined) native.closeFd(earlier);
      this.regions.set(name, fd);
    }
  }

  /** Sockets the inbox holds that no listener took (closed by the supervisor's word). */
  discard(id: number): void {
    const fds = [...(this.fds.get(id) ?? []), ...(this.arriving.get(id)?.fds ?? [])];
    this.fds.delete(id);
    this.arriving.delete(id);
    for (const fd of fds) native.closeFd(fd);
  }

  close(): void {
    if (this.handle) native.dgramClose(this.handle);
    this.handle = undefined;
  }
}

/** Waits (up to TAKE_TIMEOUT_MS) for the descriptor(s) registered under `key` in `waiting`. */
function awaitArrival<K, T>(waiting: Map<K, (value: T) => void>, key: K, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(key);
      reject(new Error(`${what} did not arrive from the supervisor within ${TAKE_TIMEOUT_MS} ms`));
    }, TAKE_TIMEOUT_MS);
    waiting.set(key, (value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}
