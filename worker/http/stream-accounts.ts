import { ResponseFlag } from '../../shared/access-log/entry.js';
import { http2Module } from '../../shared/builtins.js';
import { getLogger } from '../../shared/log/logger.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { UpstreamController } from '../upstream/upstream-handler.js';
import type { DownstreamRequest, DownstreamResponse } from './downstream.js';
import type { HttpExchangeRecord } from './exchange-record.js';

/**
 * Envoy's buffer memory accounts (overload_manager.buffer_factory_config), which
 * reset_high_memory_stream resets by. Each downstream stream has one while it is open: the bytes
 * the proxy holds for it are the request body read and not yet taken (the downstream request's
 * buffer, and what its upstream connection or stream has not written), and the response not yet
 * written to the client (the response's buffer and, for HTTP/1.1, its socket's). Envoy charges an
 * account as buffers change and keeps it in one of 8 classes by its size; here the sizes are read
 * when the action's state changes, which is when Envoy resets: the same streams are chosen.
 *
 * Without buffer_factory_config no account is kept (as Envoy, which then resets nothing), and a
 * stream costs one boolean test.
 */

const log = getLogger('main', import.meta.url);

/** Envoy's BufferMemoryAccountImpl::NUM_MEMORY_CLASSES_. */
const CLASSES = 8;
/** Envoy resets at most this many streams at a time (kMaxNumberOfStreamsToResetPerInvocation). */
const MAX_RESETS = 50;

interface Account {
  req: DownstreamRequest;
  res: DownstreamResponse;
  stats: HttpStats;
  record: HttpExchangeRecord | undefined;
  upstream: UpstreamController | undefined;
}

/** minimum_account_to_track_power_of_two - 1 (Envoy's bitshift); -1: no accounts. */
let bitshift = -1;
const open = new Map<DownstreamRequest, Account>();

/** buffer_factory_config.minimum_account_to_track_power_of_two (0 or absent: no accounts). */
export function trackStreamAccounts(minimumPowerOfTwo: number): void {
  bitshift = minimumPowerOfTwo > 0 ? minimumPowerOfTwo - 1 : -1;
}

export function streamAccountsKept(): boolean {
  return bitshift >= 0;
}

/** A downstream stream of a connection manager (its figures, its access log's record) began: its account is kept until its response closes. */
export function openStreamAccount(req: DownstreamRequest, res: DownstreamResponse, stats: HttpStats, record: HttpExchangeRecord | undefined): void {
  open.set(req, { req, res, stats, record, upstream: undefined });
  res.once('close', () => open.delete(req));
}

/**
 * Resets a stream as Envoy's connection manager does for the overload manager: counted in
 * `downstream_rq_rx_reset`, flag OM and details `overload` in its record; HTTP/2: RST_STREAM
 * NO_ERROR (its session's guard counts one reset before a response began, as a client's reset);
 * HTTP/1.1: the connection closes.
 */
function resetStream(a: Account): void {
  const http1 = a.req.httpVersionMajor === 1;
  if (http1 || a.res.headersSent) a.stats.rqRxReset.inc();
  if (a.record) {
    a.record.responseFlags |= ResponseFlag.overloadManager;
    a.record.responseCodeDetails = 'overload';
  }
  if (http1) {
    a.req.socket.destroy();
    return;
  }
  const stream = (a.req as unknown as { stream: { close(code: number): void; destroy(): void } }).stream;
  stream.close(http2Module().constants.NGHTTP2_NO_ERROR);
  // Closed with NO_ERROR, node:http2 keeps a stream whose writes are pending (they never will be, now) open here: it is let go.
  stream.destroy();
}

/** The router's try for `req` has its upstream request: what that has not written counts too. */
export function streamUpstream(req: DownstreamRequest, controller: UpstreamController): void {
  if (bitshift < 0) return;
  const account = open.get(req);
  if (account) account.upstream = controller;
}

/** An HTTP/1.1 response's writableLength includes its socket's; an HTTP/2 one's is its stream's (the session's socket is shared). */
function balance(a: Account): number {
  return a.req.readableLength + (a.upstream?.bufferedBytes() ?? 0) + a.res.writableLength;
}

/** The account's class: bit width of balance >> bitshift, less one (none below the minimum), at most 7. */
function classOf(bytes: number): number | undefined {
  const shifted = Math.floor(bytes / 2 ** bitshift);
  if (shifted < 1) return undefined;
  return Math.min(Math.floor(Math.log2(shifted)), CLASSES - 1);
}

/**
 * reset_high_memory_stream's state changed to `pressure` (0..1): as Envoy's
 * resetAccountsGivenPressure, the streams of the floor(pressure * 8) + 1 largest classes are
 * reset, largest first, at most 50. Returns how many.
 */
export function resetStreamsGivenPressure(pressure: number): number {
  if (bitshift < 0 || open.size === 0) return 0;
  const classes: Account[][] = Array.from({ length: CLASSES }, () => []);
  for (const a of open.values()) {
    const c = classOf(balance(a));
    if (c !== undefined) classes[c]!.push(a);
  }
  const toClear = Math.min(Math.floor(pressure * CLASSES) + 1, CLASSES);
  let reset = 0;
  let bucketsReset = 0;
  for (let cleared = 0; cleared < toClear; cleared++) {
    const bucket = classes[CLASSES - cleared - 1]!;
    if (bucket.length === 0) continue;
    bucketsReset++;
    for (const a of bucket) {
      if (reset >= MAX_RESETS) break;
      open.delete(a.req);
      resetStream(a);
      reset++;
    }
  }
  if (bucketsReset > 0) log.warn(`resetting ${reset} streams in ${bucketsReset} buckets, ${toClear - bucketsReset} empty buckets`);
  return reset;
}
