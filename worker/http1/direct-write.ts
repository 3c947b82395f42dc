import type { Socket } from 'node:net';
import { getSystemErrorName } from 'node:util';

/**
 * Writes straight to a socket's handle (libuv's stream), past the socket's Writable: an upstream
 * request's head (a latin1 string nobody waits on), and a response's last write (a buffer, whose
 * callback ends the response). Through `socket.write()` each also paid for the Writable's
 * bookkeeping there and back, and the head a tick to say it was done, for each request (the tick
 * alone was 1.5% of a worker's time on the bench; the response's last write, 1-2%: ten paired
 * rounds against the Writable read +2.7% to -4.5% CPU per request, median -2.2%, where two
 * identical builds read -0.4% to -2.3%, median -1.3%). Past the Writable, nothing counts what
 * the kernel has not taken yet, so only a write after which nothing more of its stream's is
 * written may go this way (back-pressure).
 *
 * Taken only when the Writable has nothing of its own under way: not connecting, not corked, not
 * ended, nothing buffered (so bytes go out in the order written), and on plaintext sockets (TLS
 * writes through its own JavaScript); otherwise it is `socket.write()`. The handle counts the
 * bytes (`socket.bytesWritten` stays right); the socket's idle timer is refreshed as a write
 * refreshes it; what the kernel does not take at once, libuv writes later from its own copy, in
 * order; a write that fails destroys the socket with the error, as the Writable would.
 *
 * Node does not export the write request's class: it is reached through `process.binding`, whose
 * route to this module is not deprecated at run time in Node 20 (only with --pending-deprecation).
 */

interface StreamHandle {
  writeLatin1String(req: WriteRequest, data: string): number;
  writeBuffer(req: WriteRequest, data: Buffer): number;
}

interface WriteRequest {
  handle: StreamHandle;
  oncomplete: (this: WriteRequest, status: number) => void;
  async: boolean;
  bytes: number;
  buffer: Buffer | null;
  socket: Socket;
  written: ((err?: Error | null) => void) | undefined;
}

interface SocketInternals {
  _handle: StreamHandle | null;
  connecting: boolean;
  encrypted?: boolean;
  _unrefTimer(): void;
}

const { WriteWrap, streamBaseState, kLastWriteWasAsync } = (
  process as unknown as { binding(name: 'stream_wrap'): { WriteWrap: new () => WriteRequest; streamBaseState: Int32Array; kLastWriteWasAsync: number } }
).binding('stream_wrap');

function writeError(status: number): NodeJS.ErrnoException {
  const code = getSystemErrorName(status);
  return Object.assign(new Error(`write ${code}`), { errno: status, code, syscall: 'write' });
}

/** libuv finished a write the kernel had not taken whole. */
function completed(this: WriteRequest, status: number): void {
  if (status < 0 && !this.socket.destroyed) this.socket.destroy(writeError(status));
  this.written?.(status < 0 ? writeError(status) : undefined);
}

/** Whether a write may go past the socket's Writable now (see above). */
function direct(socket: Socket): StreamHandle | undefined {
  const internals = socket as unknown as SocketInternals;
  const handle = internals._handle;
  if (handle === null || internals.connecting || internals.encrypted === true || socket.writableLength !== 0 || socket.writableCorked !== 0 || !socket.writable) return undefined;
  internals._unrefTimer();
  return handle;
}

function request(handle: StreamHandle, socket: Socket, buffer: Buffer | null, written: ((err?: Error | null) => void) | undefined): WriteRequest {
  const req = new WriteWrap();
  req.handle = handle;
  req.oncomplete = completed;
  req.async = false;
  req.bytes = 0;
  req.buffer = buffer;
  req.socket = socket;
  req.written = written;
  return req;
}

/**
 * Writes `data` to the socket, past its Writable when it may, and calls `written` once the kernel
 * has it all (on the next tick when it took it at once, as the Writable would), or with the error.
 */
export function writeBuffer(socket: Socket, data: Buffer, written: (err?: Error | null) => void): void {
  const handle = direct(socket);
  if (handle === undefined) {
    socket.write(data, written);
    return;
  }
  const req = request(handle, socket, data, written);
  const status = handle.writeBuffer(req, data);
  if (status !== 0) {
    const err = writeError(status);
    socket.destroy(err);
    process.nextTick(written, err);
  } else if (streamBaseState[kLastWriteWasAsync] === 0) process.nextTick(written);
  // Otherwise libuv holds the rest, and calls back (completed) once it is written.
}

/** Writes `data` (latin1) to the socket; see above for when it goes past the Writable. */
export function writeLatin1(socket: Socket, data: string): void {
  const handle = direct(socket);
  if (handle === undefined) {
    socket.write(data, 'latin1');
    return;
  }
  const status = handle.writeLatin1String(request(handle, socket, null, undefined), data);
  if (status !== 0) socket.destroy(writeError(status));
}
