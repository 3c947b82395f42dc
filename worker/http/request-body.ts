import type { DownstreamRequest } from './downstream.js';
import type { Readable } from 'node:stream';

/**
 * A downstream request's body, read whole when something needs it so (a retry, a buffering
 * filter, an authorization check that sends it).
 */

/** Whether the request has a body: HTTP/2 says "none" with END_STREAM on the headers, where content-length is optional. */
export function requestHasBody(req: DownstreamRequest): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length !== '0';
  const h2Stream = (req as unknown as { stream?: { endAfterHeaders: boolean } }).stream;
  return h2Stream ? !h2Stream.endAfterHeaders : req.headers['transfer-encoding'] !== undefined;
}

/** The whole body; rejects if the client goes away first. */
export async function readBody(req: DownstreamRequest): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The whole body if it is at most `limit` bytes: 'too_large' as soon as it is known to be larger
 * (by its content-length, or once more has arrived; the rest is not read), 'aborted' if the client
 * went away.
 */
export function readBodyUpTo(req: Readable, limit: number, declaredLength?: string): Promise<Buffer | 'too_large' | 'aborted'> {
  const declared = Number(declaredLength);
  if (declaredLength !== undefined && Number.isFinite(declared) && declared > limit) return Promise.resolve('too_large');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: Buffer | 'too_large' | 'aborted') => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onAborted);
      if (result === 'too_large') req.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) done('too_large');
      else chunks.push(chunk);
    };
    const onEnd = () => done(Buffer.concat(chunks, size));
    const onAborted = () => done('aborted');
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('aborted', onAborted);
    req.once('error', onAborted);
  });
}
