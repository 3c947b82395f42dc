import { JSON_TYPE, TEXT, type AdminEndpoint, type AdminResponse } from '../endpoint.js';
import { preparePrometheus, renderPrometheus } from '../render/stats-prometheus.js';
import { renderStatsJson } from '../render/stats-json.js';
import { renderStatsText } from '../render/stats-text.js';
import type { StatsCollector } from '../stats-collector.js';
import type { AdminState } from '../state.js';
import { endpointMetrics, type EndpointMetric } from '../endpoint-metrics.js';
import { parseStatsParams, select, SortedNames, StatsParamError, type StatsParams } from '../stats-view.js';

/** /stats (text, json, html), with Envoy's parameters; the Prometheus format is in prometheus.ts. */

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The text layout in Envoy's HTML page, chunk by chunk (escaping is per character: chunk boundaries do not matter). */
function* statsHtml(text: Iterable<string>): Generator<string> {
  yield "<!DOCTYPE html>\n<html lang='en'>\n<head><title>Envoy Admin: stats</title></head>\n<body>\n<pre>";
  for (const chunk of text) yield escapeHtml(chunk);
  yield '</pre>\n</body>\n</html>\n';
}

export function statsEndpoints(collector: StatsCollector, state: AdminState): AdminEndpoint[] {
  const names = new SortedNames(collector.merged);
  /** Per-endpoint stats the request shows (track_cluster_stats.per_endpoint_stats): filtered as the store's are. */
  const endpoints = (p: StatsParams): EndpointMetric[] =>
    endpointMetrics(state, collector).filter((m) => (p.type === 'All' || p.type === (m.type === 'counter' ? 'Counters' : 'Gauges')) && (!p.usedOnly || m.type === 'gauge' || m.value !== 0) && (!p.filter || p.filter(m.name)));
  const prometheus = async (p: StatsParams): Promise<AdminResponse> => {
    const mode = p.histogramBuckets;
    if (mode === 'disjoint' || mode === 'detailed') return { status: 400, body: 'unsupported prometheus histogram bucket mode' };
    await preparePrometheus(collector.merged);
    const summaries = mode === 'summary' || mode === 'none';
    return { status: 200, contentType: TEXT, body: renderPrometheus(collector.merged, { summaries, textReadouts: p.textReadouts, usedOnly: p.usedOnly, filter: p.filter }, endpoints({ ...p, type: 'All' })) };
  };
  const parse = (query: Map<string, string>, format?: 'prometheus'): StatsParams | AdminResponse => {
    try {
      return parseStatsParams(query, format);
    } catch (err) {
      if (err instanceof StatsParamError) return { status: 400, body: err.message };
      throw err;
    }
  };
  return [
    {
      path: '/stats',
      help: 'print server stats',
      mutates: false,
      params: [
        { name: 'usedonly', help: 'Only include stats that have been written by system since restart' },
        { name: 'filter', help: 'Regular expression (Google re2) for filtering stats' },
        { name: 'format', help: 'Format to use', choices: ['html', 'active-html', 'text', 'json'] },
        { name: 'type', help: 'Stat types to include.', choices: ['All', 'Counters', 'Histograms', 'Gauges', 'TextReadouts'] },
        { name: 'histogram_buckets', help: 'Histogram bucket display mode', choices: ['cumulative', 'disjoint', 'detailed', 'summary'] },
      ],
      handle: async (rq) => {
        const p = parse(rq.query);
        if ('status' in p) return p;
        await collector.refresh();
        if (p.format === 'prometheus') return prometheus(p);
        await names.prepare();
        const selection = { ...select(collector.merged, names, p), endpoints: p.hidden === 'only' ? [] : endpoints(p) };
        if (p.format === 'json') return { status: 200, contentType: JSON_TYPE, body: renderStatsJson(collector.merged, selection, p.histogramMode) };
        if (p.format === 'html') return { status: 200, contentType: 'text/html; charset=UTF-8', body: statsHtml(renderStatsText(collector.merged, selection, p.histogramMode)) };
        return { status: 200, contentType: TEXT, body: renderStatsText(collector.merged, selection, p.histogramMode) };
      },
    },
    {
      path: '/stats/prometheus',
      help: 'print server stats in prometheus format',
      mutates: false,
      params: [
        { name: 'usedonly', help: 'Only include stats that have been written by system since restart' },
        { name: 'text_readouts', help: 'Render text_readouts as new gaugues with value 0 (increases Prometheus data size)' },
        { name: 'filter', help: 'Regular expression (Google re2) for filtering stats' },
        { name: 'histogram_buckets', help: 'Histogram bucket display mode', choices: ['cumulative', 'summary'] },
      ],
      handle: async (rq) => {
        const p = parse(rq.query, 'prometheus');
        if ('status' in p) return p;
        await collector.refresh();
        return prometheus(p);
      },
    },
    {
      path: '/stats/recentlookups',
      help: 'Show recent stat-name lookups',
      mutates: false,
      handle: async () => {
        await collector.refresh();
        const merged = collector.merged;
        const total = `\ntotal: ${merged.lookupTotal}\n`;
        if (!merged.lookupTracking) return { status: 200, body: `Lookup tracking is not enabled. Use /stats/recentlookups/enable to enable.\n${total}` };
        const rows = [...merged.recentLookups]
          .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
          .map(([name, count]) => `${String(count).padStart(8)} ${name}\n`)
          .join('');
        return { status: 200, body: `   Count Lookup\n${rows}${total}` };
      },
    },
    {
      path: '/stats/recentlookups/enable',
      help: 'enable recording of reset stat-name lookup names',
      mutates: true,
      handle: async () => {
        await collector.trackLookups(true);
        return { status: 200, body: 'OK\n' };
      },
    },
    {
      path: '/stats/recentlookups/disable',
      help: 'disable recording of reset stat-name lookup names',
      mutates: true,
      handle: async () => {
        await collector.trackLookups(false);
        return { status: 200, body: 'OK\n' };
      },
    },
    {
      path: '/stats/recentlookups/clear',
      help: 'clear list of stat-name lookups and counter',
      mutates: true,
      handle: async () => {
        await collector.refresh(); // lookups in flight count before the clear, not after it
        collector.merged.clearLookups();
        return { status: 200, body: 'OK\n' };
      },
    },
    {
      path: '/reset_counters',
      help: 'reset all counters to zero',
      mutates: true,
      handle: async () => {
        await collector.refresh();
        collector.merged.resetCounters();
        return { status: 200, body: 'OK\n' };
      },
    },
  ];
}
