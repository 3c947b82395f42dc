import type { OutgoingHttpHeaders } from 'node:http';
import type { DownstreamResponse } from '../downstream.js';
import { Transform, type TransformCallback } from 'node:stream';
import type { MutableHeaders } from '../../../shared/header-mutation.js';

/**
 * A response body's way to the client through the HTTP filters' transforms (a compressor, a
 * gRPC-Web encoder), in Envoy's encoder order: the filter nearest the router sees the body first.
 * encodeHeaders runs from the last filter back to the first, so each transform added goes after
 * (nearer the client than) those added before it. What the proxy writes to the response goes in
 * at the first stage; what the last stage puts out goes to the client, with the client's
 * back-pressure passed back stage by stage.
 */
export class ResponseBodyPipeline {
  private readonly stages: Transform[] = [];
  private readonly counters: (((n: number) => void) | undefined)[] = [];
  private readonly write: (chunk: Buffer) => boolean;
  private readonly end: () => void;
  private readonly writeHead: DownstreamResponse['writeHead'];
  private held: { status: number; headers: MutableHeaders } | undefined;

  constructor(private readonly res: DownstreamResponse) {
    this.write = res.write.bind(res) as (chunk: Buffer) => boolean;
    this.end = res.end.bind(res) as () => void;
    this.writeHead = res.writeHead.bind(res);
    res.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => {
      const bytes = toBuffer(chunk, encoding);
      this.counters[0]?.(bytes.length);
      const first = this.stages[0]!;
      if (first.write(bytes, typeof cb === 'function' ? (cb as () => void) : typeof encoding === 'function' ? (encoding as () => void) : undefined)) return true;
      // The writer waits for the response's 'drain': it comes when the first stage has room again.
      first.once('drain', () => res.emit('drain'));
      return false;
    }) as DownstreamResponse['write'];
    res.end = ((chunk?: unknown, encoding?: unknown, cb?: unknown) => {
      const done = [chunk, encoding, cb].find((a) => typeof a === 'function') as (() => void) | undefined;
      if (chunk != null && typeof chunk !== 'function') {
        const bytes = toBuffer(chunk, encoding);
        this.counters[0]?.(bytes.length);
        this.stages[0]!.end(bytes, done);
      } else this.stages[0]!.end(done);
      return res;
    }) as DownstreamResponse['end'];
    res.once('close', () => {
      for (const stage of this.stages) stage.destroy();
    });
  }

  /** Adds `transform` nearest the client; `bytesIn` hears of each chunk that goes into it. */
  add(transform: Transform, bytesIn?: (n: number) => void): void {
    const index = this.stages.length;
    this.stages.push(transform);
    this.counters.push(bytesIn);
    transform.on('error', () => this.res.destroy());
    if (this.held) return; // the fold (this stage, or one before it) ends the response itself
    transform.on('data', (chunk: Buffer) => {
      const next = this.stages[index + 1];
      this.counters[index + 1]?.(chunk.length);
      if (next ? next.write(chunk) : this.write(chunk)) return;
      transform.pause();
      (next ?? this.res).once('drain', () => transform.resume());
    });
    transform.once('end', () => {
      const next = this.stages[index + 1];
      if (next) next.end();
      else this.end();
    });
  }

  /**
   * The response's head waits for its body, which goes no further than here: at the body's end
   * (up to `limit` bytes of it kept), `fold` turns it into headers, and the head goes to the
   * client with no body (gRPC-Web's answer to a response that is not gRPC). Stages added later
   * see nothing of it.
   */
  foldIntoHeaders(limit: number, fold: (status: number, headers: MutableHeaders, body: Buffer) => void): void {
    if (this.held) return;
    const res = this.res;
    const held = (this.held = { status: 0, headers: {} as MutableHeaders });
    res.writeHead = ((status: number, ...rest: unknown[]) => {
      held.status = status;
      held.headers = headersOf(rest.find((r) => r !== undefined && typeof r !== 'string'));
      return res;
    }) as DownstreamResponse['writeHead'];
    const kept: Buffer[] = [];
    let size = 0;
    this.add(
      new Transform({
        transform(chunk: Buffer, _encoding, callback: TransformCallback) {
          if (size < limit) {
            kept.push(chunk.subarray(0, limit - size));
            size += Math.min(chunk.length, limit - size);
          }
          callback();
        },
        flush: (callback: TransformCallback) => {
          if (held.status === 0) {
            // The head was set, not written (a reply without a body): taken from the response.
            held.status = res.statusCode;
            held.headers = headersOf(res.getHeaders());
            for (const name of res.getHeaderNames()) res.removeHeader(name);
          }
          fold(held.status, held.headers, Buffer.concat(kept));
          this.writeHead(held.status, held.headers as OutgoingHttpHeaders);
          this.end();
          callback();
        },
      }),
    );
  }
}

function toBuffer(chunk: unknown, encoding: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  return Buffer.from(chunk as Uint8Array);
}

/** writeHead's headers (an object, or Node's flat [name, value, …] array) as a header map. */
function headersOf(given: unknown): MutableHeaders {
  const out: MutableHeaders = {};
  if (Array.isArray(given)) {
    for (let i = 0; i + 1 < given.length; i += 2) {
      const k = String(given[i]).toLowerCase();
      const v = String(given[i + 1]);
      const prev = out[k];
      out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [String(prev), v];
    }
  } else if (given && typeof given === 'object') {
    for (const [k, v] of Object.entries(given)) if (v !== undefined) out[k.toLowerCase()] = v as string;
  }
  return out;
}
