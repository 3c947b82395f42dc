import { chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { native, type DgramHandle } from '../../shared/native/index.js';
import { packageRoot } from '../../shared/paths.js';
import { epochSockets } from './naming.js';

/**
 * The hot-restart RPC between two epochs of one base id: Envoy's message set (shared/
 * hot-restart.proto), encoded with protobufjs and framed as Envoy frames it (an 8-byte
 * big-endian length, then the message, cut into datagrams of at most 4096 bytes) over the
 * addon's AF_UNIX datagram sockets, a descriptor riding as SCM_RIGHTS.
 *
 * Unlike Envoy, nothing here blocks the event loop and every wait has a deadline: a request to
 * a parent that is gone (ECONNREFUSED) is retried for a while and then fails; a reply that does
 * not come fails after its timeout. Datagrams that do not frame are dropped and counted.
 */

export const MAX_DATAGRAM = 4096;
const LENGTH_BYTES = 8;

const root = new protobuf.Root().loadSync(join(packageRoot, 'shared', 'hot-restart.proto'), { keepCase: true });
const HotRestartMessage = root.lookupType('proxy.hot_restart.HotRestartMessage');

export interface RequestMessage {
  pass_listen_socket?: { address: string; worker_index?: number; listener_name?: string };
  shutdown_admin?: { child_pid?: number };
  stats?: Record<string, never>;
  drain_listeners?: Record<string, never>;
  terminate?: Record<string, never>;
  test_connection?: Record<string, never>;
}

export interface ReplyMessage {
  pass_listen_socket?: { fd: number };
  shutdown_admin?: { original_start_time_unix_seconds: number; original_start_time_unix_ms: number; hot_restart_generation?: number };
  stats?: { memory_allocated: number; num_connections: number; counter_deltas: Record<string, number>; gauges: Record<string, number> };
}

export interface WireMessage {
  request?: RequestMessage;
  reply?: ReplyMessage;
  didnt_recognize_your_last_message?: boolean;
}

export function encodeMessage(m: WireMessage): Buffer[] {
  const body = Buffer.from(HotRestartMessage.encode(HotRestartMessage.fromObject(m)).finish());
  const framed = Buffer.alloc(LENGTH_BYTES + body.length);
  framed.writeBigUInt64BE(BigInt(body.length), 0);
  body.copy(framed, LENGTH_BYTES);
  const datagrams: Buffer[] = [];
  for (let off = 0; off < framed.length; off += MAX_DATAGRAM) datagrams.push(framed.subarray(off, off + MAX_DATAGRAM));
  return datagrams;
}

function decodeMessage(body: Buffer): WireMessage {
  return HotRestartMessage.toObject(HotRestartMessage.decode(body), { longs: Number, defaults: true, oneofs: false }) as WireMessage;
}

/** Reassembles framed messages from datagrams; a datagram that breaks the framing is dropped (and the message with it). */
export class Reassembler {
  private parts: Buffer[] = [];
  private have = 0;
  private want = -1;
  dropped = 0;

  /** Feeds one datagram; returns the message it completes, if any. */
  push(datagram: Buffer): WireMessage | undefined {
    if (this.want < 0) {
      if (datagram.length < LENGTH_BYTES) {
        this.dropped++; // a brokenly tiny message fragment
        return undefined;
      }
      const length = datagram.readBigUInt64BE(0);
      if (length > BigInt(64 * 1024 * 1024)) {
        this.dropped++;
        return undefined;
      }
      this.want = Number(length);
      datagram = datagram.subarray(LENGTH_BYTES);
    }
    if (this.have + datagram.length > this.want) {
      this.dropped++; // not aligned: start afresh with the next datagram
      this.reset();
      return undefined;
    }
    this.parts.push(Buffer.from(datagram));
    this.have += datagram.length;
    if (this.have < this.want) return undefined;
    const body = Buffer.concat(this.parts);
    this.reset();
    try {
      return decodeMessage(body);
    } catch {
      this.dropped++;
      return undefined;
    }
  }

  private reset(): void {
    this.parts = [];
    this.have = 0;
    this.want = -1;
  }
}

export class HotRestartRpcError extends Error {}

export interface ChannelOptions {
  socketPath: string;
  socketMode: number;
  baseId: number;
  epoch: number;
  /** Answers a request from the next epoch; the descriptor, if any, rides on the reply. */
  onRequest: (request: RequestMessage) => Promise<{ reply?: ReplyMessage; fd?: number }> | { reply?: ReplyMessage; fd?: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One epoch's two sockets: its `parent` socket (requests from the next epoch come in; replies go
 * to that epoch's `child` socket) and its `child` socket (replies from the previous epoch).
 */
export class HotRestartChannel {
  private readonly parentSocket: DgramHandle;
  private readonly childSocket: DgramHandle;
  private readonly names: ReturnType<typeof epochSockets>;
  private readonly inbound = new Reassembler();
  private readonly replies = new Reassembler();
  private waiting: ((m: { message: WireMessage; fd: number }) => void) | undefined;
  /** Outgoing requests, one in flight at a time. */
  private requestChain: Promise<unknown> = Promise.resolve();
  /** Incoming requests, answered one at a time, in order. */
  private answerChain: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: ChannelOptions) {
    this.names = epochSockets(options.socketPath, options.baseId, options.epoch);
    // Envoy's order: the child socket, then the parent socket. EADDRINUSE on either means the id is taken.
    this.childSocket = native.dgramOpen(this.names.ownChild, (data, fd) => this.onReply(data, fd));
    try {
      this.parentSocket = native.dgramOpen(this.names.ownParent, (data, fd) => this.onInbound(data, fd));
    } catch (err) {
      native.dgramClose(this.childSocket);
      throw err;
    }
    if (!options.socketPath.startsWith('@') && options.socketMode) {
      for (const name of [this.names.ownChild, this.names.ownParent]) chmodSync(name, options.socketMode);
    }
  }

  get droppedDatagrams(): number {
    return this.inbound.dropped + this.replies.dropped;
  }

  private onInbound(data: Buffer, fd: number): void {
    if (fd >= 0) native.closeFd(fd); // requests never carry descriptors
    const message = this.inbound.push(data);
    if (!message) return;
    this.answerChain = this.answerChain.then(() => this.answer(message)).catch(() => undefined);
  }

  private async answer(message: WireMessage): Promise<void> {
    if (!message.request || Object.keys(message.request).length === 0) {
      await this.send(this.names.childOfNext, { didnt_recognize_your_last_message: true }, -1, 1000);
      return;
    }
    const { reply, fd } = await this.options.onRequest(message.request);
    if (reply) await this.send(this.names.childOfNext, { reply }, fd ?? -1, 1000);
  }

  private onReply(data: Buffer, fd: number): void {
    const message = this.replies.push(data);
    if (!message || !this.waiting) {
      if (fd >= 0) native.closeFd(fd); // nobody asked for it
      return;
    }
    const waiter = this.waiting;
    this.waiting = undefined;
    waiter({ message, fd });
  }

  /** Sends a framed message, retrying while the peer's socket is not there yet (ECONNREFUSED) or full (EAGAIN). */
  private async send(dest: string, message: WireMessage, fd: number, retryForMs: number): Promise<void> {
    const deadline = Date.now() + retryForMs;
    const datagrams = encodeMessage(message);
    if (fd >= 0 && datagrams.length > 1) throw new HotRestartRpcError('a descriptor must travel with a single-datagram message');
    for (const datagram of datagrams) {
      for (;;) {
        try {
          native.dgramSend(this.parentSocket, dest, datagram, fd);
          break;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if ((code !== 'ECONNREFUSED' && code !== 'EAGAIN' && code !== 'ENOENT') || Date.now() >= deadline) {
            throw new HotRestartRpcError(`hot restart send to ${dest} failed: ${(err as Error).message}`);
          }
          await sleep(code === 'EAGAIN' ? 1 : 50);
        }
      }
    }
  }

  /**
   * Sends a request to the previous epoch and waits for its reply (`expectReply` false: fire and
   * forget, as drain_listeners and terminate are). One request is in flight at a time.
   */
  request(request: RequestMessage, opts: { timeoutMs: number; expectReply: boolean }): Promise<{ reply?: ReplyMessage; fd: number }> {
    const run = async () => {
      const dest = this.names.parentOfPrevious;
      if (!dest) throw new HotRestartRpcError('epoch 0 has no parent');
      if (!opts.expectReply) {
        await this.send(dest, { request }, -1, opts.timeoutMs);
        return { fd: -1 };
      }
      const answered = new Promise<{ message: WireMessage; fd: number }>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.waiting = undefined;
          reject(new HotRestartRpcError(`no reply from the parent epoch on ${this.names.ownChild} within ${opts.timeoutMs} ms`));
        }, opts.timeoutMs);
        this.waiting = (m) => {
          clearTimeout(timer);
          resolve(m);
        };
      });
      // The deadline may pass while the send is still being retried: that rejection is read below.
      answered.catch(() => undefined);
      try {
        await this.send(dest, { request }, -1, opts.timeoutMs);
      } catch (err) {
        this.waiting = undefined;
        throw err;
      }
      const { message, fd } = await answered;
      if (message.didnt_recognize_your_last_message) throw new HotRestartRpcError('the parent epoch did not recognize the request');
      return { reply: message.reply, fd };
    };
    const result = this.requestChain.then(run, run);
    this.requestChain = result.catch(() => undefined);
    return result;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    native.dgramClose(this.parentSocket);
    native.dgramClose(this.childSocket);
    // A file-system socket outlives its process: left behind, it would make the next epoch that
    // takes this slot (same base id, epoch % 3) fail to bind.
    if (!this.options.socketPath.startsWith('@')) for (const name of [this.names.ownChild, this.names.ownParent]) rmSync(name, { force: true });
  }
}
