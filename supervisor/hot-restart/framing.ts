import messages from './messages.cjs';
import { SEAL_HEADER_BYTES } from './seal.js';

/**
 * The hot-restart messages (Envoy's set, messages.proto, encoded by the code protobufjs's generator
 * made from it: scripts/generate-hot-restart-messages.mjs) and their framing as Envoy frames
 * them: an 8-byte big-endian length, then the message, cut into pieces that each fit one sealed
 * datagram; and the reassembly of one sender's pieces, with the declared size checked before
 * anything is kept.
 */

export const MAX_DATAGRAM = 4096;
const PIECE_BYTES = MAX_DATAGRAM - SEAL_HEADER_BYTES;
const LENGTH_BYTES = 8;

const { HotRestartMessage } = messages.proxy.hot_restart;

export interface RequestMessage {
  pass_listen_socket?: { address: string; worker_index?: number; listener_name?: string };
  shutdown_admin?: { child_pid?: number };
  stats?: Record<string, never>;
  drain_listeners?: Record<string, never>;
  terminate?: Record<string, never>;
  test_connection?: Record<string, never>;
  configuration?: { build: string; options: string; file: Buffer };
}

export interface ReplyMessage {
  pass_listen_socket?: { fd: number };
  shutdown_admin?: { original_start_time_unix_seconds: number; original_start_time_unix_ms: number; hot_restart_generation?: number };
  stats?: { memory_allocated: number; num_connections: number; counter_deltas: Record<string, number>; gauges: Record<string, number> };
  configuration?: { read: Buffer };
}

export interface WireMessage {
  request?: RequestMessage;
  reply?: ReplyMessage;
  didnt_recognize_your_last_message?: boolean;
}

/** The framed message (8-byte length, then the body), in pieces that fit a sealed datagram. */
export function encodeMessage(m: WireMessage): Buffer[] {
  const body = Buffer.from(HotRestartMessage.encode(HotRestartMessage.fromObject(m)).finish());
  const framed = Buffer.alloc(LENGTH_BYTES + body.length);
  framed.writeBigUInt64BE(BigInt(body.length), 0);
  body.copy(framed, LENGTH_BYTES);
  const pieces: Buffer[] = [];
  for (let off = 0; off < framed.length; off += PIECE_BYTES) pieces.push(framed.subarray(off, off + PIECE_BYTES));
  return pieces;
}

function decodeMessage(body: Buffer): WireMessage {
  return HotRestartMessage.toObject(HotRestartMessage.decode(body), { longs: Number, defaults: true, oneofs: false }) as WireMessage;
}

/**
 * Reassembles one sender's framed messages from their pieces. The declared length is checked
 * against the limit before anything is kept; a first piece always starts afresh, so a message
 * cut short can never swallow the next one.
 */
export class Reassembler {
  private parts: Buffer[] = [];
  private have = 0;
  private want = -1;
  private messageId = -1n;

  constructor(
    private readonly maxMessageBytes: number,
    private readonly onDropped: (why: string) => void,
  ) {}

  /** Feeds one piece; returns the message it completes, if any. */
  push(piece: Buffer, first: boolean, messageId: bigint): { message: WireMessage; messageId: bigint } | undefined {
    if (first) {
      if (this.want >= 0) this.onDropped('a message left incomplete by the next one');
      this.reset();
      if (piece.length < LENGTH_BYTES) return this.drop('a first piece too short to hold a length');
      const length = piece.readBigUInt64BE(0);
      if (length > BigInt(this.maxMessageBytes)) return this.drop(`a message declaring ${length} bytes (the limit is ${this.maxMessageBytes})`);
      this.want = Number(length);
      this.messageId = messageId;
      piece = piece.subarray(LENGTH_BYTES);
    } else if (this.want < 0 || messageId !== this.messageId) {
      return this.drop('a piece of no message in progress');
    }
    if (this.have + piece.length > this.want) return this.drop("a piece past its message's declared length");
    this.parts.push(Buffer.from(piece));
    this.have += piece.length;
    if (this.have < this.want) return undefined;
    const body = Buffer.concat(this.parts);
    this.reset();
    try {
      return { message: decodeMessage(body), messageId };
    } catch {
      return this.drop('a message that does not decode');
    }
  }

  private drop(why: string): undefined {
    this.reset();
    this.onDropped(why);
    return undefined;
  }

  private reset(): void {
    this.parts = [];
    this.have = 0;
    this.want = -1;
    this.messageId = -1n;
  }
}

