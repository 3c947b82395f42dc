import { list } from '../config/access.js';
import type { JsonObject } from '../config/proto-json.js';
import { stdRegex } from '../std-regex.js';

/**
 * Tags of a statistic, as Envoy's tag producer makes them from its name: the fixed ones first
 * (`--stats-tag`, then stats_config.stats_tags with fixed_value), then the configured regex
 * extractors, then Envoy's default ones unless `use_all_default_tags` is false. Prometheus labels
 * (admin/render/stats-prometheus.ts) and DogStatsD tags (./statsd.ts) are these.
 */

interface Extractor {
  tag: string;
  /** Group 1 is removed from the name; group 2 is the tag's value. */
  regex: RegExp;
}

// Envoy's default tag extractors (source/common/config/well_known_names.cc) for the stat names
// this proxy emits, in Envoy's order.
const EXTRACTORS: Extractor[] = [
  { tag: 'envoy.response_code', regex: /_rq(_(\d{3}))$/ },
  { tag: 'envoy.response_code_class', regex: /_rq_((\d))xx$/ },
  { tag: 'envoy.http_conn_manager_prefix', regex: /^(?:listener\.(?:[^.]*\.)*?)?http\.(([^.]*)\.)/ },
  { tag: 'envoy.listener_address', regex: /^listener\.(((?:[_.\d]*|[_[\]a-fA-F\d]*))\.)/ },
  { tag: 'envoy.cluster_name', regex: /^cluster\.(([^.]*)\.)/ },
  { tag: 'envoy.tcp_prefix', regex: /^tcp\.(([^.]*)\.)/ },
  // proxy_proto.[<stat_prefix>.](versions.v<version>.)<base_stat>, then proxy_proto.(<stat_prefix>.)<base_stat>
  { tag: 'envoy.proxy_protocol_version', regex: /^proxy_proto\.(?:[^.]+\.)?(versions\.v(\d)\.)\w+$/d },
  { tag: 'envoy.proxy_protocol_prefix', regex: /^proxy_proto\.((?!versions\.)([^.]+)\.)(?:versions\.v\d\.)?\w+$/d },
];

export interface Tagged {
  /** The name with every extracted tag value removed. */
  extracted: string;
  tags: [string, string][];
}

/**
 * A custom extractor from stats_config.stats_tags: an ECMAScript regex, as Envoy's std::regex
 * reads it (its first group is removed, its second, or else its first, is the value).
 */
interface CustomExtractor {
  tag: string;
  regex: RegExp;
}

/** This process's tag configuration (configureTags). */
let tagConfig: { fixed: [string, string][]; custom: CustomExtractor[]; defaults: boolean } = { fixed: [], custom: [], defaults: true };

export function configureTags(commandLineTags: [string, string][], statsConfig: JsonObject | undefined): void {
  const fixed = [...commandLineTags];
  const custom: CustomExtractor[] = [];
  for (const t of list(statsConfig?.stats_tags)) {
    if (typeof t.fixed_value === 'string') fixed.push([String(t.tag_name), t.fixed_value]);
    else if (typeof t.regex === 'string') custom.push({ tag: String(t.tag_name), regex: stdRegex(t.regex, 'd') });
  }
  tagConfig = { fixed, custom, defaults: statsConfig?.use_all_default_tags !== false };
  taggedCache.clear();
}

const taggedCache = new Map<string, Tagged>();

export function extractTags(name: string): Tagged {
  let cached = taggedCache.get(name);
  if (cached) return cached;
  let extracted = name;
  const tags: [string, string][] = [...tagConfig.fixed];
  for (const { tag, regex } of tagConfig.custom) {
    const m = regex.exec(extracted);
    const removed = m?.indices?.[1];
    if (!m || m[1] === undefined || !removed) continue;
    tags.push([tag, m[2] ?? m[1]]);
    extracted = extracted.slice(0, removed[0]) + extracted.slice(removed[1]);
  }
  for (const { tag, regex } of tagConfig.defaults ? EXTRACTORS : []) {
    const m = regex.exec(extracted);
    if (!m || m[1] === undefined || m[2] === undefined) continue;
    if (tag === 'envoy.listener_address' && m[2] === 'admin') continue;
    tags.push([tag, m[2]]);
    const start = m.indices?.[1]?.[0] ?? m.index + m[0].lastIndexOf(m[1]);
    extracted = extracted.slice(0, start) + extracted.slice(start + m[1].length);
  }
  cached = { extracted, tags };
  taggedCache.set(name, cached);
  return cached;
}

