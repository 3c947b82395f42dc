import { getLogger } from './log/logger.js';
import { native, type DgramHandle } from './native/index.js';

/**
 * Listening sockets for a worker that is already running: a datagram pair made for each worker
 * at fork (the worker inherits one end), on which the supervisor sends each new socket as
 * SCM_RIGHTS with its id. The worker takes a socket by id when a listener names it; a listener
 * message and its socket travel on two channels, so either may arrive first. Only the parent
 * that forked the worker holds the other end, and the kernel's credentials say so.
 */

const log = getLogger('main', import.meta.url);
/** How long a listener waits for its socket before it is reported as not created. */
const TAKE_TIMEOUT_MS = 10_000;

/** The supervisor's end for one worker process. */
export class SocketChannelParent {
  readonly childEnd: number;
  private readonly mine: number;
  private closed = false;

  constructor() {
    [this.mine, this.childEnd] = native.socketPair();
  }

  /** After the fork: the child has its own copy of its end. */
  releaseChildEnd(): void {
    native.closeFd(this.childEnd);
  }

  /** Sends one of the `count` descriptors of socket `id` this worker serves; retried shortly if the worker's queue is full. */
  send(id: number, fd: number, count = 1, attempt = 0): void {
    if (this.closed) return;
    try {
      native.sendFd(this.mine, Buffer.from(`${id} ${count}`), fd);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' && attempt < 100) setTimeout(() => this.send(id, fd, count, attempt + 1), 10).unref();
      // ECONNREFUSED: the worker is gone; its replacement inherits every socket at fork.
      else if (code !== 'ECONNREFUSED') log.warn(`could not send socket ${id} to a worker: ${(err as Error).message}`);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    native.closeFd(this.mine);
  }
}

/**
 * The worker's end: the descriptors of each socket, those inherited at fork and those sent since.
 * A socket may come as several descriptors (reuse_port, or sockets a previous epoch passed);
 * each datagram says how many its socket has, and the socket is whole once they have all come.
 */
export class SocketInbox {
  private readonly fds = new Map<number, number[]>();
  /** Descriptors of sockets still arriving: how many each has, and those come so far. */
  private readonly arriving = new Map<number, { count: number; fds: number[] }>();
  private readonly waiting = new Map<number, (fds: number[]) => void>();
  private handle: DgramHandle | undefined;

  constructor(channelFd: number, inherited: { id: number; childFd: number }[]) {
    for (const s of inherited) this.fds.set(s.id, [...(this.fds.get(s.id) ?? []), s.childFd]);
    if (channelFd < 0) return;
    this.handle = native.dgramAdopt(channelFd, (data, fd, uid, pid) => {
      if (fd < 0) return;
      if (pid !== process.ppid || uid !== process.getuid?.()) {
        native.closeFd(fd);
        log.warn(`a socket from pid ${pid} (not the supervisor) refused`);
        return;
      }
      const [id, count] = data.toString().split(' ').map(Number) as [number, number | undefined];
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
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`socket ${id} did not arrive from the supervisor within ${TAKE_TIMEOUT_MS} ms`));
      }, TAKE_TIMEOUT_MS);
      this.waiting.set(id, (fds) => {
        clearTimeout(timer);
        resolve(fds);
      });
    });
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
