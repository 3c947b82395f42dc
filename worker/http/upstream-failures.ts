import { ResponseFlag } from '../../shared/access-log/entry.js';
import { connectResetReason, transportFailureReason, underscored } from '../../shared/upstream/transport-failure.js';
import { CONNECT_TIMEOUT } from '../upstream/upstream-handler.js';
import type { HttpStats } from '../../shared/stats/http-stats.js';
import type { Cluster, Host } from '../upstream/cluster.js';
import type { HttpExchangeRecord } from './exchange-record.js';
import { LocalReply } from './local-reply.js';
import type { ResetReason, RetryStatus } from './retry-state.js';
import { streamTag } from '../../shared/log/log-tags.js';
import { Level } from '../../shared/log/levels.js';
import { getLogger } from '../../shared/log/logger.js';
import type { DownstreamRequest } from './downstream.js';

/**
 * How a try to an upstream can fail, as the router (./router.ts) and the upgrade router tell
 * them apart, and how each is logged and answered in Envoy's words: its response flag, response
 * code details and reset reason (a connect failure with the transport's own reason).
 */

export type Failure = 'connect' | 'reset' | 'timeout' | 'per_try_timeout' | 'per_try_idle_timeout' | 'max_stream_duration' | 'client';

/**
 * An abort reason, allocated once: aborting is control flow here, not an error report. It has no
 * stack: one captured as the module loads would name the bundle's top level, and keep that
 * function's code (the whole bundle's initialisation, 110 KB of bytecode) alive for the
 * process's life.
 */
function abortReason(message: string, failure: Failure): Error & { failure: Failure } {
  return Object.assign(new Error(message), { failure, stack: `Error: ${message}` });
}

export const ABORT = {
  timeout: abortReason('route timeout', 'timeout'),
  perTry: abortReason('per-try timeout', 'per_try_timeout'),
  perTryIdle: abortReason('per-try idle timeout', 'per_try_idle_timeout'),
  maxStream: abortReason('upstream max stream duration reached', 'max_stream_duration'),
  client: abortReason('downstream went away', 'client'),
};

/** What each failure means in an access log: its response flag and Envoy's response code details. */
export const FAILURE_LOG: Record<Exclude<Failure, 'client'>, { flag: number; details: string }> = {
  connect: { flag: ResponseFlag.upstreamConnectionFailure, details: 'upstream_reset_before_response_started{remote_connection_failure}' },
  reset: { flag: ResponseFlag.upstreamConnectionTermination, details: 'upstream_reset_before_response_started{connection_termination}' },
  timeout: { flag: ResponseFlag.upstreamRequestTimeout, details: 'upstream_response_timeout' },
  per_try_timeout: { flag: ResponseFlag.upstreamRequestTimeout, details: 'upstream_per_try_timeout' },
  per_try_idle_timeout: { flag: ResponseFlag.upstreamRequestTimeout, details: 'upstream_per_try_idle_timeout' },
  max_stream_duration: { flag: ResponseFlag.upstreamMaxStreamDurationReached, details: 'upstream_max_stream_duration_reached' },
};

export function classify(err: Error & { failure?: Failure; code?: string; connectFailure?: boolean }): Failure {
  if (err.failure) return err.failure;
  // The connection never came up (refused, unreachable, its TLS handshake failed): a connect failure, as Envoy's pool reports it.
  if (err.connectFailure) return 'connect';
  const code = err.code ?? '';
  if (code === CONNECT_TIMEOUT || code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EADDRNOTAVAIL') return 'connect';
  return 'reset';
}

/** What a failed try means to the retry decision (Envoy's stream reset reasons: a per-try timeout or max stream duration is a local reset). */
export function resetReason(failure: Failure, err: { refused?: boolean }): ResetReason {
  if (failure === 'connect') return 'connect';
  return err.refused ? 'refused' : 'reset';
}


/** A reset's response flag, details and reason, as Envoy names them: a refused or reset HTTP/2 stream, else the connection's termination. */
export function resetLog(err: { refused?: boolean; streamOnly?: boolean }): { flag: number; details: string; reason: string } {
  if (err.refused) return { flag: ResponseFlag.upstreamRemoteReset, details: 'upstream_reset_before_response_started{remote_refused_stream_reset}', reason: 'remote refused stream reset' };
  if (err.streamOnly) return { flag: ResponseFlag.upstreamRemoteReset, details: 'upstream_reset_before_response_started{remote_reset}', reason: 'remote reset' };
  return { ...FAILURE_LOG.reset, reason: 'connection termination' };
}

/**
 * A connect failure's flag (UF), details and reason, as Envoy 1.37 words them: the reset reason
 * (`remote connection failure`, `connection timeout`) and the transport's failure reason
 * (`delayed connect error: Connection refused`, a TLS error), e.g. details
 * `upstream_reset_before_response_started{remote_connection_failure|delayed_connect_error:_Connection_refused}`.
 */
export function connectLog(err: Error): { flag: number; details: string; reason: string; transport: string | undefined } {
  const reset = connectResetReason(err, CONNECT_TIMEOUT);
  const transport = transportFailureReason(err, CONNECT_TIMEOUT);
  return {
    flag: FAILURE_LOG.connect.flag,
    transport,
    details: `upstream_reset_before_response_started{${underscored(reset)}${transport ? `|${underscored(transport)}` : ''}}`,
    reason: transport ? `${reset}, transport failure reason: ${transport}` : reset,
  };
}

/**
 * A try's failure in the cluster's and its host's figures, as Envoy's router and pools count each
 * kind. `betweenTries`: the route's timeout came during a retry's back-off; `hadConnection`: the
 * try was given its connection (the outlier detector's local-origin success before the failure).
 */
export function countTryFailure(failure: Exclude<Failure, 'client'>, err: Error, cs: Cluster['stats'], host: Host | undefined, betweenTries: boolean, hadConnection: boolean): void {
  // A local failure for outlier detection: a gateway failure unless split_external_local_origin_errors.
  if (failure !== 'max_stream_duration') host?.localFailure(hadConnection);
  // A try that failed on a host it reached for counts as that host's error (Envoy's router, retried or not).
  if (failure !== 'max_stream_duration') host?.stats.rqError.inc();
  if (failure === 'connect') {
    // The request waited for a connection that failed: Envoy's pool fails its pending requests so (the connection's failure is the host's, counted once).
    cs.rqPendingFailureEject.inc();
  }
  else if (failure === 'timeout') {
    // As Envoy's onResponseTimeout: counted for a try awaiting its response, none between tries.
    if (!betweenTries) cs.rqTimeout.inc();
    host?.stats.rqTimeout.inc();
  }
  else if (failure === 'per_try_timeout') {
    cs.rqPerTryTimeout.inc();
    host?.stats.rqTimeout.inc();
  } else if (failure === 'max_stream_duration' || failure === 'per_try_idle_timeout') {
    // counted when it fired (upstream_rq_max_duration_reached, upstream_rq_per_try_idle_timeout)
  } else if ((err as { noError?: boolean }).noError) {
    // An HTTP/2 stream the upstream reset with NO_ERROR: its connection carries on.
    cs.rqRxResetNoError.inc();
  } else {
    cs.rqRxReset.inc();
    // An HTTP/2 stream reset alone leaves its connection up: no connection was destroyed, none failed its protocol.
    if (!(err as { streamOnly?: boolean }).streamOnly) {
      cs.cxDestroyRemoteWithActiveRq.inc();
      cs.cxDestroyWithActiveRq.inc();
      // The upstream's bytes were not HTTP (llhttp: HTTPParserError; node:http2: a protocol error).
      if (err.name === 'HTTPParserError' || /^(HPE_|ERR_HTTP2_(ERROR|INVALID|STREAM_ERROR|SESSION_ERROR))/.test((err as NodeJS.ErrnoException).code ?? '')) cs.cxProtocolError.inc();
    }
  }
}

/** A failure after the response began: the client sees its stream cut short, as Envoy resets it. */
export function resetAfterResponseStarted(failure: Exclude<Failure, 'client'>, stats: HttpStats, record: HttpExchangeRecord | undefined): void {
  stats.rqResetAfterResponseStarted.inc();
  stats.rqTxReset.inc();
  if (record && failure === 'max_stream_duration') {
    record.responseFlags |= FAILURE_LOG.max_stream_duration.flag;
    record.responseCodeDetails = FAILURE_LOG.max_stream_duration.details;
  } else if (record) {
    record.responseFlags |= ResponseFlag.upstreamRemoteReset;
    record.responseCodeDetails = 'upstream_reset_after_response_started{remote_reset}';
  }
}

/** The exchange's failure in its access-log record: only the outcome (a failed try that a retry made good leaves no flag), with a refused retry's flag. */
export function recordFailure(failure: Exclude<Failure, 'client'>, err: Error & { refused?: boolean; streamOnly?: boolean }, record: HttpExchangeRecord, decision: RetryStatus): void {
  const connect = failure === 'connect' ? connectLog(err) : undefined;
  const outcome = failure === 'reset' ? resetLog(err) : (connect ?? FAILURE_LOG[failure]);
  record.responseFlags |= outcome.flag | retryRefusalFlag(decision);
  record.responseCodeDetails = outcome.details;
  if (connect) record.upstreamTransportFailureReason = connect.transport;
}

/**
 * The local reply for a try's failure, as Envoy words each: a reset's names its reason (after
 * retries, "retried and the latest reset reason"); a timeout is 504, or 204 when the request
 * asked so (x-envoy-upstream-rq-timeout-alt-response).
 */
export function failureReply(failure: Exclude<Failure, 'client'>, err: Error & { refused?: boolean; streamOnly?: boolean }, rq: { altResponse: boolean; requestComplete: boolean; retried: boolean }): { status: number; body: string } {
  switch (failure) {
    case 'timeout':
    case 'per_try_timeout':
    case 'per_try_idle_timeout':
      return rq.altResponse ? { status: 204, body: '' } : LocalReply.upstreamTimeout;
    case 'max_stream_duration':
      return rq.requestComplete ? LocalReply.upstreamMaxStreamDuration : LocalReply.upstreamMaxStreamDurationIncomplete;
    default: {
      const reason = failure === 'connect' ? connectLog(err).reason : resetLog(err).reason;
      return { status: 503, body: `upstream connect error or disconnect/reset before headers. ${rq.retried ? 'retried and the latest ' : ''}reset reason: ${reason}` };
    }
  }
}

/** The response flag of a retry that was due and refused: URX for the limit, UO for the breaker. */
export function retryRefusalFlag(decision: RetryStatus): number {
  if (decision === 'limit') return ResponseFlag.upstreamRetryLimitExceeded;
  if (decision === 'overflow') return ResponseFlag.upstreamOverflow;
  return 0;
}

/** The router logger, for a failed try's line of the request's story (see stream-log.ts). */
const routerLog = getLogger('router', import.meta.url);

/**
 * A try failed, in Envoy's words: its timeouts (`upstream timeout`, `upstream per try timeout`,
 * …), else `upstream reset` with the reset reason (`remote connection failure`, `connection
 * termination`, …) and the transport's failure reason, if any.
 */
export function logTryFailure(req: DownstreamRequest, failure: Failure, err: Error & { refused?: boolean; streamOnly?: boolean }): void {
  if (!routerLog.enabled(Level.debug)) return;
  const tag = streamTag(req.socket, req);
  if (failure === 'timeout') return routerLog.debug(`${tag}upstream timeout`);
  if (failure === 'per_try_timeout') return routerLog.debug(`${tag}upstream per try timeout`);
  if (failure === 'per_try_idle_timeout') return routerLog.debug(`${tag}upstream per try idle timeout`);
  if (failure === 'max_stream_duration') return routerLog.debug(`${tag}upstream max stream duration reached`);
  const { reason, transport } = failure === 'connect' ? connectLog(err) : { ...resetLog(err), transport: undefined };
  routerLog.debug(`${tag}upstream reset: reset reason: ${reason}, transport failure reason: ${transport ?? ''}`);
}
