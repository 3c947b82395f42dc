import { ResponseFlag } from '../../shared/access-log/entry.js';
import { connectResetReason, transportFailureReason, underscored } from '../../shared/upstream/transport-failure.js';
import { CONNECT_TIMEOUT } from '../upstream/upstream-handler.js';
import type { ResetReason } from './retry-state.js';

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
