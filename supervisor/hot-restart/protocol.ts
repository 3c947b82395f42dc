import { chmodSync, rmSync } from 'node:fs';
import { native, type DgramHandle } from '../../shared/native/index.js';
import { encodeMessage, Reassembler, type ReplyMessage, type RequestMessage, type WireMessage } from './framing.js';
import { epochSockets } from './naming.js';
import { ChannelRefusals } from './refusals.js';
import { nextMessageId, seal, unseal } from './seal.js';

/**
 * The hot-restart RPC between two epochs of one base id: Envoy's messages, framed as Envoy frames
 * them (framing.ts), over the addon's AF_UNIX datagram sockets, a descriptor riding as SCM_RIGHTS.
 *
 * Beyond Envoy, the channel trusts only its own deployment (see seal.ts): a datagram counts only
 * if the kernel says its sender runs as this process's uid (or root, when the operator trusts
 * root) and it is sealed with the family's secret for this socket by the expected epoch.
 * Everything else is refused before any of it is kept. Messages are reassembled per sender with
 * the size checked before buffering, requests are answered a few at a time, and every wait has a
 * deadline: nothing a datagram says can take a socket, stop the epoch or jam the next restart.
 */

/**
 * Requests are a few hundred bytes, but for the configuration's sources (configuration.ts, at
 * most 256 KiB); a reply carries the parent's stats, which can be megabytes.
 */
const MAX_REQUEST_BYTES = 512 * 1024;
const MAX_REPLY_BYTES = 64 * 1024 * 1024;
/** Requests waiting for an answer; more are dropped (the next epoch sends one at a time). */
const MAX_PENDING_REQUESTS = 8;
/** Senders with a message half received; the oldest is forgotten first. */
const MAX_SENDERS = 4;

export class HotRestartRpcError extends Error {}

export interface ChannelOptions {
  socketPath: string;
  socketMode: number;
  baseId: number;
  epoch: number;
  /** The family's secret, from the base id's shared-memory region (seal.ts). */
  secret: Buffer;
  /** Root may talk to this epoch although the proxy runs as another user (--hot-restart-trust-root). */
  trustRoot: boolean;
  /** Answers a request from the next epoch; the descriptor, if any, rides on the reply. */
  onRequest: (request: RequestMessage) => Promise<{ reply?: ReplyMessage; fd?: number }> | { reply?: ReplyMessage; fd?: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Who may talk to an epoch: processes of its own user, and root only when the operator says so. */
export function trustedSender(uid: number, ownUid: number, trustRoot: boolean): boolean {
  return uid === ownUid || (uid === 0 && trustRoot);
}

interface Sender {
  uid: number;
  pid: number;
}

/** One bound socket's inbound side: who may send to it, and their messages half received. */
class Inbound {
  readonly refusals: ChannelRefusals;
  private readonly senders = new Map<number, Reassembler>();

  constructor(
    readonly name: string,
    private readonly secret: Buffer,
    private readonly trusted: (uid: number) => boolean,
    private readonly expectedSenderEpoch: number,
    private readonly maxMessageBytes: number,
  ) {
    this.refusals = new ChannelRefusals(name);
  }

  /** The message a datagram completes, if it is trusted and completes one. */
  receive(data: Buffer, sender: Sender): { message: WireMessage; messageId: bigint } | undefined {
    if (sender.uid < 0) return this.refuse('a datagram without credentials (or cut short)', sender);
    if (!this.trusted(sender.uid)) return this.refuse(`a datagram from a process running as uid ${sender.uid}`, sender);
    const opened = unseal(this.secret, this.name, data);
    if (typeof opened === 'string') return this.refuse(opened, sender);
    if (opened.senderEpoch !== this.expectedSenderEpoch) return this.refuse(`a datagram from epoch ${opened.senderEpoch} (only epoch ${this.expectedSenderEpoch} talks to this socket)`, sender);
    let reassembler = this.senders.get(sender.pid);
    if (!reassembler) {
      if (this.senders.size >= MAX_SENDERS) this.senders.delete(this.senders.keys().next().value!);
      reassembler = new Reassembler(this.maxMessageBytes, (why) => this.refusals.note('dropped', why, sender));
      this.senders.set(sender.pid, reassembler);
    }
    return reassembler.push(opened.piece, opened.first, opened.messageId);
  }

  refuse(why: string, sender: Sender): undefined {
    this.refusals.note('refused', why, sender);
    return undefined;
  }

  drop(why: string, sender: Sender): undefined {
    this.refusals.note('dropped', why, sender);
    return undefined;
  }
}

/**
 * One epoch's two sockets: its `parent` socket (requests from the next epoch come in; replies go
 * to that epoch's `child` socket) and its `child` socket (replies from the previous epoch).
 */
export class HotRestartChannel {
  private readonly parentSocket: DgramHandle;
  private readonly childSocket: DgramHandle;
  private readonly names: ReturnType<typeof epochSockets>;
  private readonly requests: Inbound;
  private readonly replies: Inbound;
  private waiting: { messageId: bigint; resolve: (m: { message: WireMessage; fd: number }) => void } | undefined;
  /** Outgoing requests, one in flight at a time. */
  private requestChain: Promise<unknown> = Promise.resolve();
  /** Incoming requests, answered one at a time, in order; at most MAX_PENDING_REQUESTS wait. */
  private answerChain: Promise<unknown> = Promise.resolve();
  private pendingAnswers = 0;
  /** Requests are taken only in increasing id order: none can be played again. */
  private lastRequestId = 0n;
  private closed = false;

  constructor(private readonly options: ChannelOptions) {
    this.names = epochSockets(options.socketPath, options.baseId, options.epoch);
    const ownUid = process.getuid!();
    const trusted = (uid: number) => trustedSender(uid, ownUid, options.trustRoot);
    this.requests = new Inbound(this.names.ownParent, options.secret, trusted, options.epoch + 1, MAX_REQUEST_BYTES);
    this.replies = new Inbound(this.names.ownChild, options.secret, trusted, options.epoch - 1, MAX_REPLY_BYTES);
    // Envoy's order: the child socket, then the parent socket. EADDRINUSE on either means the id is taken.
    this.childSocket = native.dgramOpen(this.names.ownChild, (data, fd, uid, pid) => this.onReply(data, fd, { uid, pid }));
    try {
      this.parentSocket = native.dgramOpen(this.names.ownParent, (data, fd, uid, pid) => this.onInbound(data, fd, { uid, pid }));
    } catch (err) {
      native.dgramClose(this.childSocket);
      throw err;
    }
    if (!options.socketPath.startsWith('@') && options.socketMode) {
      for (const name of [this.names.ownChild, this.names.ownParent]) chmodSync(name, options.socketMode);
    }
  }

  /** Datagrams turned away since this channel opened (also counted in the server.hot_restart_* stats). */
  get turnedAway(): { refused: number; dropped: number } {
    const a = this.requests.refusals.totals;
    const b = this.replies.refusals.totals;
    return { refused: a.refused + b.refused, dropped: a.dropped + b.dropped };
  }

  private onInbound(data: Buffer, fd: number, sender: Sender): void {
    if (fd >= 0) native.closeFd(fd); // requests never carry descriptors
    const got = this.requests.receive(data, sender);
    if (!got) return;
    if (got.messageId <= this.lastRequestId) return this.requests.refuse('a request played again', sender);
    this.lastRequestId = got.messageId;
    if (this.pendingAnswers >= MAX_PENDING_REQUESTS) return this.requests.drop(`a request beyond the ${MAX_PENDING_REQUESTS} waiting for an answer`, sender);
    this.pendingAnswers++;
    this.answerChain = this.answerChain
      .then(() => this.answer(got.message, got.messageId))
      .catch(() => undefined)
      .finally(() => this.pendingAnswers--);
  }

  private async answer(message: WireMessage, requestId: bigint): Promise<void> {
    if (!message.request || Object.keys(message.request).length === 0) {
      await this.send(this.names.childOfNext, { didnt_recognize_your_last_message: true }, requestId, -1, 1000);
      return;
    }
    const { reply, fd } = await this.options.onRequest(message.request);
    if (reply) await this.send(this.names.childOfNext, { reply }, requestId, fd ?? -1, 1000);
  }

  private onReply(data: Buffer, fd: number, sender: Sender): void {
    const got = this.replies.receive(data, sender);
    if (!got || !this.waiting || got.messageId !== this.waiting.messageId) {
      if (fd >= 0) native.closeFd(fd); // nobody asked for it
      if (got) this.replies.drop('a reply to no request waiting for one', sender);
      return;
    }
    const waiter = this.waiting;
    this.waiting = undefined;
    waiter.resolve({ message: got.message, fd });
  }

  /** Sends a sealed message, retrying while the peer's socket is not there yet (ECONNREFUSED) or full (EAGAIN). */
  private async send(dest: string, message: WireMessage, messageId: bigint, fd: number, retryForMs: number): Promise<void> {
    const deadline = Date.now() + retryForMs;
    const pieces = encodeMessage(message);
    if (fd >= 0 && pieces.length > 1) throw new HotRestartRpcError('a descriptor must travel with a single-datagram message');
    for (const [i, piece] of pieces.entries()) {
      const datagram = seal(this.options.secret, dest, messageId, this.options.epoch, i === 0, piece);
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
      const messageId = nextMessageId();
      if (!opts.expectReply) {
        await this.send(dest, { request }, messageId, -1, opts.timeoutMs);
        return { fd: -1 };
      }
      const answered = new Promise<{ message: WireMessage; fd: number }>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.waiting = undefined;
          reject(new HotRestartRpcError(`no reply from the parent epoch on ${this.names.ownChild} within ${opts.timeoutMs} ms`));
        }, opts.timeoutMs);
        this.waiting = {
          messageId,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
      });
      // The deadline may pass while the send is still being retried: that rejection is read below.
      answered.catch(() => undefined);
      try {
        await this.send(dest, { request }, messageId, -1, opts.timeoutMs);
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
