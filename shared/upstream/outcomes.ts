/**
 * Upstream outcomes as workers report them to the supervisor's outlier detectors: per host, runs
 * of [kind, count] flattened (`['S', 12, 'G', 3]`: 12 successes, then 3 gateway failures).
 * Responses (external origin, Envoy's putHttpResponseCode):
 *   S  a response below 500
 *   E  a 5xx other than 502, 503, 504
 *   G  502, 503, 504; without split_external_local_origin_errors, also a local failure (connect
 *      failure, timeout, reset), as Envoy maps local errors to 503 and 504 then
 * Local origin, with split_external_local_origin_errors only (Envoy's putResult, split):
 *   C  the connection was had (LocalOriginConnectSuccess, a TCP proxy's ...Final)
 *   L  a local failure before any connection (connect failure, a timeout waiting for one)
 *   l  the connection was had, then a local failure (reset, timeout): C then L
 *   s, e, g  the connection was had, then that response: C then S, E or G (one kind, so that a
 *      run of successes stays one run)
 */
export type OutcomeKind = 'S' | 'E' | 'G' | 'C' | 'L' | 'l' | 's' | 'e' | 'g';
export type ResponseOutcome = 'S' | 'E' | 'G';
export type OutcomeRuns = (OutcomeKind | number)[];

export function outcomeOfStatus(status: number): ResponseOutcome {
  if (status < 500) return 'S';
  return status === 502 || status === 503 || status === 504 ? 'G' : 'E';
}

/** `_outlier.<cluster>`: what /clusters prints of a detector (a hidden text readout). */
export const OUTLIER_READOUT_PREFIX = '_outlier.';

export interface OutlierReport {
  /** Success-rate average and ejection threshold of the last interval; -1 without enough data. */
  average: number;
  threshold: number;
  /** Each host's success rate over the last interval; -1 without enough requests. */
  hosts: Record<string, number>;
  /** The same over local-origin outcomes (split_external_local_origin_errors; else -1). */
  localAverage: number;
  localThreshold: number;
  localHosts: Record<string, number>;
}
