import type { Socket } from 'node:net';
import { getSystemErrorName } from 'node:util';

/**
 * A latin1 string written straight to a socket's handle (libuv's stream), past the socket's
 * Writable, for a write nobody waits on: an upstream request's head. Through `socket.write()` it
 * also paid for the Writable's bookkeeping there and back and a tick to say it was done, for each
 * request (the tick alone was 1.5% of a worker's time on the bench).
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
}

interface WriteRequest {
  handle: StreamHandle;
  oncomplete: (this: WriteRequest, status: number) => void;
  async: boolean;
  bytes: number;
  buffer: null;
  socket: Socket;
}

interface SocketInternals {
  _handle: StreamHandle | null;
  connecting: boolean;
  encrypted?: boolean;
  _unrefTimer(): void;
}

const { WriteWrap } = (process as unknown as { binding(name: 'stream_wrap'): { WriteWrap: new () => WriteRequest } }).binding('stream_wrap');

function writeError(status: number): NodeJS.ErrnoException {
  const code = getSystemErrorName(status);
  return Object.assign(new Error(`write ${code}`), { errno: status, code, syscall: 'write' });
}

/** libuv finished a write the kernel had not taken whole. */
function completed(this: WriteRequest, status: number): void {
  if (status < 0 && !this.socket.destroyed) this.socket.destroy(writeError(status));
}

/** Writes `data` (latin1) to the socket; see above for when it goes past the Writable. */
export function writeLatin1(socket: Socket, data: string): void {
  const internals = socket as unknown as SocketInternals;
  const handle = internals._handle;
  if (handle === null || internals.connecting || internals.encrypted === true || socket.writableLength !== 0 || socket.writableCorked !== 0 || !socket.writable) {
    socket.write(data, 'latin1');
    return;
  }
  internals._unrefTimer();
  const req = new WriteWrap();
  req.handle = handle;
  req.oncomplete = completed;
  req.async = false;
  req.bytes = 0;
  req.buffer = null;
  req.socket = socket;
  const status = handle.writeLatin1String(req, data);
  if (status !== 0) socket.destroy(writeError(status));
}
