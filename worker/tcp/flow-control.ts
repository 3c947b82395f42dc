import type { Readable } from 'node:stream';
import type { Counter } from '../../shared/stats/store.js';

/** The counters one direction of a joined pair moves: its destination backing up and draining, its source pausing and resuming. */
export interface FlowCounters {
  backedUp?: Counter;
  drained?: Counter;
  pausedReading?: Counter;
  resumedReading?: Counter;
}

/** Where a pump writes: a socket, an HTTP/2 stream, or a downstream response (../http/downstream.ts). */
export interface FlowSink extends NodeJS.EventEmitter {
  readonly destroyed: boolean;
  readonly writableLength: number;
  readonly writableEnded: boolean;
  write(chunk: Buffer, callback?: (err?: Error | null) => void): boolean;
  end(): unknown;
}

/**
 * Bytes from `from` to `to` with Envoy's watermark: `to` may hold up to `limit` bytes not yet
 * written to the kernel (its side's per_connection_buffer_limit_bytes). A chunk that takes it
 * past the limit pauses reading `from` until that chunk has been written out, so a slow reader
 * on one side holds at most the limit in this process, whatever the other side sends. Any
 * stream pair will do: sockets, an HTTP/2 stream, an upgraded request's. (Node's
 * pipe() pauses at its own 16 KiB mark instead, whatever the configuration says.)
 */
export function pump(from: Readable, to: FlowSink, limit: number, counters: FlowCounters, onChunk?: (length: number) => void): void {
  from.on('data', (chunk: Buffer) => {
    if (to.destroyed) return;
    onChunk?.(chunk.length);
    if (to.writableLength + chunk.length <= limit) {
      to.write(chunk);
      return;
    }
    from.pause();
    counters.backedUp?.inc();
    counters.pausedReading?.inc();
    to.write(chunk, (err) => {
      if (err || from.destroyed) return;
      counters.drained?.inc();
      counters.resumedReading?.inc();
      from.resume();
    });
  });
  from.once('end', () => to.end());
}
