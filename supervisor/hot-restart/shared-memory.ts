import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../process-watch.js';
import { HOT_RESTART_PROTOCOL_VERSION, SHARED_MEMORY_LAYOUT, SHARED_MEMORY_SIZE } from '../../shared/version.js';
import { SECRET_BYTES } from './seal.js';

/**
 * Envoy's per-base-id shared memory, emulated with a small file (Node has no shm_open/mmap):
 * `/dev/shm/proxy_shared_memory_<10 × base id>` (the temporary directory where /dev/shm does not
 * exist). Epoch 0 creates it exclusively; later epochs open it and check its layout and version,
 * refusing a restart into an incompatible build. It records the first epoch's start time and the
 * newest epoch's pid, so a second epoch 0 on a base id in use is refused while that pid lives.
 *
 * It also holds the family's secret (32 random bytes from epoch 0) that seals every hot-restart
 * datagram: the file is 0600, so only the deployment's own user can read it, and a later epoch
 * refuses a region that another user owns or that others may read (someone else's secret).
 *
 * The "initializing" flag is a marker file created with O_EXCL (an atomic test-and-set between
 * processes) that holds its owner's pid: a marker whose owner died is cleared instead of blocking
 * every later restart (Envoy #33446).
 */

const MAGIC = 0x50525859; // "PRXY"
const OFFSETS = Object.fromEntries(
  SHARED_MEMORY_LAYOUT.map(([name], i) => [name, SHARED_MEMORY_LAYOUT.slice(0, i).reduce((sum, [, size]) => sum + size, 0)]),
) as Record<(typeof SHARED_MEMORY_LAYOUT)[number][0], number>;

export class HotRestartError extends Error {
  override name = 'HotRestartError';
}

export function sharedMemoryDir(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

export function sharedMemoryPath(baseId: number, dir = sharedMemoryDir()): string {
  return join(dir, `proxy_shared_memory_${baseId * 10}`);
}

interface Header {
  magic: number;
  version: number;
  size: number;
  newestPid: number;
  originalStartTimeMs: number;
  secret: Buffer;
}

function encode(h: Header): Buffer {
  const b = Buffer.alloc(SHARED_MEMORY_SIZE);
  b.writeUInt32LE(h.magic, OFFSETS.magic);
  b.writeUInt32LE(h.version, OFFSETS.version);
  b.writeUInt32LE(h.size, OFFSETS.size);
  b.writeUInt32LE(h.newestPid, OFFSETS.newest_pid);
  b.writeBigUInt64LE(BigInt(Math.floor(h.originalStartTimeMs)), OFFSETS.original_start_time_ms);
  h.secret.copy(b, OFFSETS.secret);
  return b;
}

function decode(b: Buffer): Header | undefined {
  if (b.length < OFFSETS.secret + SECRET_BYTES) return undefined;
  return {
    magic: b.readUInt32LE(OFFSETS.magic),
    version: b.readUInt32LE(OFFSETS.version),
    size: b.readUInt32LE(OFFSETS.size),
    newestPid: b.readUInt32LE(OFFSETS.newest_pid),
    originalStartTimeMs: Number(b.readBigUInt64LE(OFFSETS.original_start_time_ms)),
    secret: Buffer.from(b.subarray(OFFSETS.secret, OFFSETS.secret + SECRET_BYTES)),
  };
}

export class SharedMemoryRegion {
  private constructor(
    readonly path: string,
    readonly baseId: number,
    private header: Header,
  ) {}

  get originalStartTimeMs(): number {
    return this.header.originalStartTimeMs;
  }

  /** What seals this family's hot-restart datagrams. */
  get secret(): Buffer {
    return this.header.secret;
  }

  /** Epoch 0: a new region holding a new secret, unless a live process still uses this base id. */
  static create(baseId: number, startTimeMs: number, secret: Buffer, dir?: string): SharedMemoryRegion {
    const path = sharedMemoryPath(baseId, dir);
    if (existsSync(path)) {
      const old = decode(readFileSync(path));
      if (old && old.magic === MAGIC && old.newestPid !== process.pid && processAlive(old.newestPid)) {
        throw new HotRestartError(
          `base id ${baseId} is in use by pid ${old.newestPid} (${path}): hot restart it with --restart-epoch and the next epoch number, or start with another --base-id`,
        );
      }
      try {
        unlinkSync(path); // left by a process that is gone
      } catch (err) {
        throw new HotRestartError(`cannot remove the stale shared memory region ${path} (${(err as NodeJS.ErrnoException).code}): it belongs to another user; remove it as that user or start with another --base-id`);
      }
    }
    const header: Header = {
      magic: MAGIC,
      version: HOT_RESTART_PROTOCOL_VERSION,
      size: SHARED_MEMORY_SIZE,
      newestPid: process.pid,
      originalStartTimeMs: startTimeMs,
      secret,
    };
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (err) {
      throw new HotRestartError(`cannot create shared memory region ${path}, check user permissions: ${(err as Error).message}`);
    }
    try {
      writeSync(fd, encode(header));
    } finally {
      closeSync(fd);
    }
    return new SharedMemoryRegion(path, baseId, header);
  }

  /** Epoch > 0: the region epoch 0 created, checked against this build's layout and protocol. */
  static open(baseId: number, dir?: string): SharedMemoryRegion {
    const path = sharedMemoryPath(baseId, dir);
    let data: Buffer;
    try {
      const fd = openSync(path, 'r');
      try {
        const st = fstatSync(fd);
        if (st.uid !== process.getuid!() || (st.mode & 0o077) !== 0) {
          throw new HotRestartError(
            `shared memory region ${path} belongs to uid ${st.uid} with mode ${(st.mode & 0o777).toString(8)}: it is not this deployment's (a region is created by epoch 0 of the same user, mode 600); refusing to hot restart with it`,
          );
        }
        data = readFileSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      if (err instanceof HotRestartError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? `no epoch 0 has run with base id ${baseId} on this host (or it runs in another /dev/shm)` : (err as Error).message;
      throw new HotRestartError(`cannot open shared memory region ${path}: ${why}`);
    }
    const header = decode(data);
    if (!header || header.magic !== MAGIC || header.size !== SHARED_MEMORY_SIZE || data.length !== SHARED_MEMORY_SIZE) {
      throw new HotRestartError(
        `Hot restart shared memory size mismatch in ${path} (${header?.size ?? data.length} bytes, this build uses ${SHARED_MEMORY_SIZE}): you must have hot restarted into a not-hot-restart-compatible new version; start it at epoch 0 instead`,
      );
    }
    if (header.version !== HOT_RESTART_PROTOCOL_VERSION) {
      throw new HotRestartError(
        `Hot restart version mismatch in ${path} (${header.version}.${header.size}, this build is ${HOT_RESTART_PROTOCOL_VERSION}.${SHARED_MEMORY_SIZE}): you must have hot restarted into a not-hot-restart-compatible new version; start it at epoch 0 instead`,
      );
    }
    return new SharedMemoryRegion(path, baseId, header);
  }

  /** This epoch now serves: later epoch-0 starts on this base id are refused while it lives. */
  claimNewest(): void {
    this.header = { ...this.header, newestPid: process.pid };
    const fd = openSync(this.path, 'r+');
    try {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(process.pid);
      writeSync(fd, b, 0, 4, OFFSETS.newest_pid);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * This epoch exits: if no later epoch has claimed the region, the family ends with it and the
   * region goes (Envoy leaves its segment behind; a stale one would only have to be taken over).
   */
  releaseIfNewest(): void {
    try {
      const current = decode(readFileSync(this.path));
      if (current && current.newestPid !== process.pid && processAlive(current.newestPid)) return;
      if (this.initializingPid() === process.pid) unlinkSync(this.markerPath);
      unlinkSync(this.path);
    } catch {
      // already gone
    }
  }

  private get markerPath(): string {
    return `${this.path}.initializing`;
  }

  /**
   * Sets "initializing" for this process, or throws if another live process holds it (the
   * supervisor should retry later, with the same epoch). A marker whose owner is dead is cleared.
   */
  beginInitializing(): void {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(this.markerPath, 'wx', 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const owner = this.initializingPid();
      if (owner !== undefined && owner !== process.pid && processAlive(owner)) {
        throw new HotRestartError(`previous proxy process (pid ${owner}) is still initializing; retry the restart with the same epoch once it is ready`);
      }
      unlinkSync(this.markerPath); // its owner died before it was ready
    }
    throw new HotRestartError(`cannot set the initializing marker ${this.markerPath}`);
  }

  /** The pid that holds "initializing", if any. */
  initializingPid(): number | undefined {
    try {
      const fd = openSync(this.markerPath, 'r');
      const b = Buffer.alloc(16);
      const n = readSync(fd, b, 0, 16, 0);
      closeSync(fd);
      const pid = Number(b.subarray(0, n).toString());
      return Number.isInteger(pid) && pid > 0 ? pid : 0;
    } catch {
      return undefined;
    }
  }

  /** This process is ready (its workers serve): the next epoch may start. */
  endInitializing(): void {
    if (this.initializingPid() === process.pid) unlinkSync(this.markerPath);
  }
}
