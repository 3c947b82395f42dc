import { stats } from './process.js';
import type { Counter, Gauge } from './store.js';

/**
 * Envoy's codec figures, made when a codec is first used, as Envoy makes them: the downstream
 * ones rooted at `http1.` / `http2.`, an upstream cluster's at `cluster.<name>.http1.` /
 * `.http2.`. HTTP/1: headers with underscores dropped or refused (headers_with_underscores_action).
 * HTTP/2 as well: streams open, resets received and sent, trailers received, GOAWAYs sent,
 * keepalive PINGs unanswered.
 */

export interface Http1CodecStats {
  droppedHeadersWithUnderscores: Counter;
  requestsRejectedWithUnderscores: Counter;
}

export interface Http2CodecStats extends Http1CodecStats {
  streamsActive: Gauge;
  rxReset: Counter;
  txReset: Counter;
  trailers: Counter;
  goawaySent: Counter;
  keepaliveTimeout: Counter;
  /** Streams reset with REFUSED_STREAM (a peer over its concurrency limit, or draining). */
  streamRefusedErrors: Counter;
}

const REFUSED_STREAM = 7; // RFC 9113 §7
const http1 = new Map<string, Http1CodecStats>();
const http2 = new Map<string, Http2CodecStats>();

function underscores(p: string): Http1CodecStats {
  return { droppedHeadersWithUnderscores: stats.counter(`${p}dropped_headers_with_underscores`), requestsRejectedWithUnderscores: stats.counter(`${p}requests_rejected_with_underscores_in_headers`) };
}

/** `prefix`: '' downstream, `cluster.<name>.` upstream. */
export function http1CodecStats(prefix = ''): Http1CodecStats {
  let s = http1.get(prefix);
  if (!s) http1.set(prefix, (s = underscores(`${prefix}http1.`)));
  return s;
}

export function http2CodecStats(prefix = ''): Http2CodecStats {
  let s = http2.get(prefix);
  if (!s) {
    const p = `${prefix}http2.`;
    s = {
      ...underscores(p),
      streamsActive: stats.gauge(`${p}streams_active`),
      rxReset: stats.counter(`${p}rx_reset`),
      txReset: stats.counter(`${p}tx_reset`),
      trailers: stats.counter(`${p}trailers`),
      goawaySent: stats.counter(`${p}goaway_sent`),
      keepaliveTimeout: stats.counter(`${p}keepalive_timeout`),
      streamRefusedErrors: stats.counter(`${p}stream_refused_errors`),
    };
    http2.set(prefix, s);
  }
  return s;
}

/**
 * Follows one HTTP/2 stream for its codec's figures: open until it closes; trailers received; a
 * reset sent or received. On a stream this side opened (upstream), the resets it sends are the
 * ones it marks with the function returned; any other close with an error code is the peer's. On
 * a stream the peer opened (downstream), one the peer reset before this side had finished
 * (`aborted`) is the peer's; any other close with an error code is this side's.
 */
export function followHttp2Stream(codec: Http2CodecStats, stream: import('node:http2').Http2Stream, opened: 'here' | 'by peer'): () => void {
  codec.streamsActive.inc();
  let resetHere = false;
  let peerAborted = false;
  if (opened === 'by peer') stream.once('aborted', () => (peerAborted = true));
  stream.once('trailers', () => codec.trailers.inc());
  stream.once('close', () => {
    codec.streamsActive.dec();
    const code = stream.rstCode ?? 0;
    if (code === REFUSED_STREAM) codec.streamRefusedErrors.inc();
    if (opened === 'here') {
      if (resetHere) codec.txReset.inc();
      else if (code !== 0) codec.rxReset.inc();
    } else if (peerAborted) codec.rxReset.inc();
    else if (code !== 0) codec.txReset.inc();
  });
  return () => (resetHere = true);
}
