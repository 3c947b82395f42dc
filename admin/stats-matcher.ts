import { list, obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { compileStringMatcher } from '../shared/matchers.js';
import { isHiddenStat } from '../shared/stats/scopes.js';

/**
 * stats_config.stats_matcher as Envoy applies it to full stat names: `reject_all`, or an
 * `exclusion_list` (a name any pattern matches is dropped), or an `inclusion_list` (only names a
 * pattern matches are kept). The per-host figures behind /clusters are not statistics in Envoy's
 * store, and are always kept. Undefined: everything is kept.
 */
export function statsMatcher(statsConfig: JsonObject | undefined): ((name: string) => boolean) | undefined {
  const m = statsConfig?.stats_matcher;
  if (m === undefined) return undefined;
  const matcher = obj(m);
  if (matcher.reject_all === true) return (name) => isHiddenStat(name);
  const patterns = (l: unknown) => list(obj(l).patterns).map((p) => compileStringMatcher(p));
  if (matcher.exclusion_list !== undefined) {
    const excluded = patterns(matcher.exclusion_list);
    return (name) => isHiddenStat(name) || !excluded.some((p) => p(name));
  }
  if (matcher.inclusion_list !== undefined) {
    const included = patterns(matcher.inclusion_list);
    return (name) => isHiddenStat(name) || included.some((p) => p(name));
  }
  return undefined;
}
