import { spawnSync } from 'node:child_process';

/** Why promtool cannot check here, or undefined when it can. */
export function promtoolMissing(): string | undefined {
  return spawnSync('promtool', ['--version']).error ? 'promtool is not installed (Debian package prometheus; .ci/run installs it)' : undefined;
}

/**
 * `promtool check metrics` findings for a Prometheus exposition, but for naming lint. Exit 1 is a
 * format error. Exit 3 is lint about naming conventions only, which Envoy's own output draws too
 * (no HELP lines, counters without _total): the names stay Envoy's, so that dashboards carry over
 * (server.days_until_first_cert_expiring is one: promtool wants seconds; a transport socket
 * match's total_match_count counter is another: promtool wants no _count there). Any other finding counts.
 */
export function promtoolFindings(body: string): string[] {
  const check = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
  const namingLint =
    /^envoy_\S+ (no help text|counter metrics should have "_total" suffix|non-counter metrics should not have "_total" suffix|metric names should not contain abbreviated units|use base unit "seconds" instead of "days"|non-histogram and non-summary metrics should not have "_count" suffix)$/;
  const findings = `${check.stdout}${check.stderr}`.split('\n').filter((l) => l.trim() && !namingLint.test(l.trim()));
  if (check.status !== 0 && check.status !== 3) findings.unshift(`promtool exit ${check.status}`);
  return findings;
}
