import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { prometheusName } from '../admin/render/stats-prometheus.js';
import { promtoolFindings, promtoolMissing } from './helpers/promtool.js';
import { httpRequest } from './helpers/proxy.js';
import { loadCatalogue, startCatalogueRun, type CatalogueEntry, type CatalogueRun } from './helpers/stats-catalogue.js';

/**
 * Envoy's standard statistics, name for name (shared/stats/envoy-catalogue.json): for a
 * configuration that uses every subsystem the catalogue covers that this proxy implements, after
 * traffic through each, every applicable name is served with Envoy's type, in /stats (by type),
 * /stats?format=json and /stats/prometheus. An entry that does not apply says why (refused,
 * cannot); one that applies but is not served yet is marked gap, and must still be absent, so the
 * marks stay true as names are added.
 */

const catalogue = loadCatalogue();
let run: CatalogueRun;

before(async () => {
  run = await startCatalogueRun();
});

after(() => run?.stop());

const applicable = (e: CatalogueEntry) => !e.refused && !e.cannot && !e.gap;

describe("Envoy's standard statistics", () => {
  it('every entry of the catalogue is well formed, and says why when it does not apply', () => {
    const seen = new Set<string>();
    for (const e of catalogue) {
      assert.ok(['counter', 'gauge', 'histogram', 'text_readout'].includes(e.type), `${e.name}: type ${e.type}`);
      assert.ok(/^(docs\/root\/|api\/envoy\/)/.test(e.doc), `${e.name}: the documentation page it comes from`);
      assert.ok([e.refused, e.cannot, e.gap].filter(Boolean).length <= 1, `${e.name}: one reason at most`);
      assert.ok(!seen.has(`${e.subsystem} ${e.name}`), `${e.name} listed twice`);
      seen.add(`${e.subsystem} ${e.name}`);
    }
  });

  it('serves every applicable name with its type', () => {
    const wrong: string[] = [];
    for (const e of catalogue.filter(applicable)) {
      const name = run.instantiate(e);
      if (/<[^>]+>/.test(name)) wrong.push(`${e.name}: a placeholder this configuration does not fill`);
      else if (!run.served[e.type].has(name)) {
        const other = (Object.keys(run.served) as CatalogueEntry['type'][]).find((t) => run.served[t].has(name));
        wrong.push(other ? `${name} is a ${other}, Envoy's is a ${e.type}` : `${name} (${e.type}) is not served`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it("keeps the control plane's identifier from its responses (control_plane.identifier)", async () => {
    const body = (await httpRequest(`http://${run.proxy.admin}/stats?filter=^control_plane\\.identifier$`)).body;
    assert.equal(body.trim(), 'control_plane.identifier: "catalogue-control-plane"');
  });

  it('serves no name marked as a gap (remove the mark when a name is added)', () => {
    const served = catalogue.filter((e) => e.gap).map((e) => run.instantiate(e)).filter((n) => Object.values(run.served).some((s) => s.has(n)));
    assert.deepEqual(served, []);
  });

  it('lists the applicable names in /stats?format=json and /stats/prometheus too, and the Prometheus output is valid', async (t) => {
    const json = JSON.parse((await httpRequest(`http://${run.proxy.admin}/stats?format=json`)).body) as { stats: { name?: string; histograms?: { computed_quantiles: { name: string }[] } }[] };
    const inJson = new Set<string>();
    for (const s of json.stats) {
      if (s.name) inJson.add(s.name);
      for (const h of s.histograms?.computed_quantiles ?? []) inJson.add(h.name);
    }
    const prometheus = (await httpRequest(`http://${run.proxy.admin}/stats/prometheus`)).body;
    const families = new Map<string, string>();
    for (const m of prometheus.matchAll(/^# TYPE (\S+) (\S+)$/gm)) families.set(m[1]!, m[2]!);
    const promType = { counter: 'counter', gauge: 'gauge', histogram: 'histogram' } as Record<string, string>;
    const missing: string[] = [];
    for (const e of catalogue.filter(applicable)) {
      const name = run.instantiate(e);
      if (e.type !== 'text_readout' && !inJson.has(name)) missing.push(`json: ${name}`);
      if (e.type === 'text_readout') continue; // Prometheus shows text readouts only when asked
      const family = prometheusName(name);
      if (families.get(family) !== promType[e.type]) missing.push(`prometheus: ${family} (${name}) is ${families.get(family) ?? 'absent'}, not ${promType[e.type]}`);
    }
    assert.deepEqual(missing, []);
    // Without promtool (.ci/run installs it) the format check is not done, and the run says so.
    const noPromtool = promtoolMissing();
    if (noPromtool) t.diagnostic(`Prometheus format not checked: ${noPromtool}`);
    else assert.deepEqual(promtoolFindings(prometheus), []);
  });
});
