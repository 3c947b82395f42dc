/**
 * Upstream outcomes as workers report them to the supervisor's outlier detectors: per host, runs
 * of [kind, count] flattened (`['S', 12, 'G', 3]`: 12 successes, then 3 gateway failures).
 *   S  a response below 500
 *   E  a 5xx other than 502, 503, 504
 *   G  502, 503, 504, or a local failure (connect failure, timeout, reset), as Envoy maps local
 *      errors without split_external_local_origin_errors
 */
export type OutcomeKind = 'S' | 'E' | 'G';
export type OutcomeRuns = (OutcomeKind | number)[];

export function outcomeOfStatus(status: number): OutcomeKind {
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
}
