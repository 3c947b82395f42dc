import { cryptoModule } from '../../shared/builtins.js';

/**
 * What makes a hot-restart datagram one of this deployment's. Beyond Envoy, whose abstract
 * socket any local user can write to: the kernel-vouched sender uid is checked by the channel,
 * and every datagram is sealed with the family's secret — 32 random bytes that epoch 0 puts in
 * the base id's 0600 shared-memory region, so only a process that can read that file can seal.
 *
 *   tag (32) | message id (8) | sender epoch (4) | flags (1) | a piece of the framed message
 *
 * The tag is HMAC-SHA256 over the destination socket's name and everything after the tag: a
 * datagram is good for one socket, from one epoch, and cannot be cut from one message into
 * another. The secret itself never travels, so a process that binds a name a dead epoch left
 * learns nothing it could use. Request ids only grow (the system-wide monotonic clock), so a
 * request cannot be played twice; a reply carries its request's id, so a late reply to a request
 * that timed out is never taken for the answer to the next one.
 */

export const SECRET_BYTES = 32;
const TAG_BYTES = 32;
export const SEAL_HEADER_BYTES = TAG_BYTES + 8 + 4 + 1;
export const FIRST_PIECE = 1;

export interface Opened {
  messageId: bigint;
  senderEpoch: number;
  first: boolean;
  piece: Buffer;
}

function tag(secret: Buffer, destination: string, body: Buffer): Buffer {
  return cryptoModule().createHmac('sha256', secret).update(destination).update('\0').update(body).digest();
}

export function seal(secret: Buffer, destination: string, messageId: bigint, senderEpoch: number, first: boolean, piece: Buffer): Buffer {
  const datagram = Buffer.allocUnsafe(SEAL_HEADER_BYTES + piece.length);
  datagram.writeBigUInt64BE(messageId, TAG_BYTES);
  datagram.writeUInt32BE(senderEpoch, TAG_BYTES + 8);
  datagram[TAG_BYTES + 12] = first ? FIRST_PIECE : 0;
  piece.copy(datagram, SEAL_HEADER_BYTES);
  tag(secret, destination, datagram.subarray(TAG_BYTES)).copy(datagram, 0);
  return datagram;
}

/** The datagram's contents if `secret` sealed it for `destination`; otherwise why not. */
export function unseal(secret: Buffer, destination: string, datagram: Buffer): Opened | string {
  if (datagram.length < SEAL_HEADER_BYTES) return `a ${datagram.length}-byte datagram (shorter than a seal)`;
  if (!cryptoModule().timingSafeEqual(tag(secret, destination, datagram.subarray(TAG_BYTES)), datagram.subarray(0, TAG_BYTES))) {
    return 'a datagram not sealed with this deployment\'s secret';
  }
  return {
    messageId: datagram.readBigUInt64BE(TAG_BYTES),
    senderEpoch: datagram.readUInt32BE(TAG_BYTES + 8),
    first: (datagram[TAG_BYTES + 12]! & FIRST_PIECE) !== 0,
    piece: datagram.subarray(SEAL_HEADER_BYTES),
  };
}

let lastId = 0n;

/** A request id larger than every earlier one on this host (CLOCK_MONOTONIC is system-wide). */
export function nextMessageId(): bigint {
  const now = process.hrtime.bigint();
  lastId = now > lastId ? now : lastId + 1n;
  return lastId;
}
