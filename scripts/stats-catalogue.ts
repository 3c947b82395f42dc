// Which of Envoy's standard statistics (shared/stats/envoy-catalogue.json) a running proxy
// serves with Envoy's type, for a configuration using every subsystem the catalogue covers that
// this proxy implements (test/helpers/stats-catalogue.ts starts it and sends the traffic).
// Prints, per subsystem: present, gaps (applicable, not served yet), refused (the feature is
// refused by name), cannot apply (a reason given), and anything not accounted for.
// Usage: node --import tsx scripts/stats-catalogue.ts [--list]   (--list names the gaps and the unaccounted)
// Prints figures; asserts nothing (test/stats-catalogue.test.ts does).
import { loadCatalogue, startCatalogueRun, type CatalogueEntry } from '../test/helpers/stats-catalogue.js';

type Outcome = 'present' | 'gap' | 'refused' | 'cannot' | 'unaccounted' | 'wrong type' | 'gap served';

export function outcomeOf(e: CatalogueEntry, name: string, served: Record<string, Set<string>>): Outcome {
  if (e.refused) return 'refused';
  if (e.cannot) return 'cannot';
  const present = served[e.type]?.has(name) ?? false;
  const elsewhere = !present && Object.values(served).some((s) => s.has(name));
  if (e.gap) return present || elsewhere ? 'gap served' : 'gap';
  return present ? 'present' : elsewhere ? 'wrong type' : 'unaccounted';
}

const run = await startCatalogueRun();
try {
  const catalogue = loadCatalogue();
  const outcomes: Outcome[] = ['present', 'gap', 'refused', 'cannot', 'unaccounted', 'wrong type', 'gap served'];
  const bySubsystem = new Map<string, Map<Outcome, string[]>>();
  for (const e of catalogue) {
    const name = run.instantiate(e);
    const o = outcomeOf(e, name, run.served);
    const m = bySubsystem.get(e.subsystem) ?? new Map<Outcome, string[]>();
    bySubsystem.set(e.subsystem, m);
    m.set(o, [...(m.get(o) ?? []), `${name} (${e.type})${e.gap ? ` — ${e.gap}` : ''}`]);
  }
  console.log(`Envoy's standard statistics: ${catalogue.length} names in shared/stats/envoy-catalogue.json`);
  console.log(`| subsystem | ${outcomes.join(' | ')} |`);
  console.log(`|---|${outcomes.map(() => '---').join('|')}|`);
  const totals = new Map<Outcome, number>();
  for (const [subsystem, m] of [...bySubsystem].sort()) {
    console.log(`| ${subsystem} | ${outcomes.map((o) => m.get(o)?.length ?? 0).join(' | ')} |`);
    for (const o of outcomes) totals.set(o, (totals.get(o) ?? 0) + (m.get(o)?.length ?? 0));
  }
  console.log(`| all | ${outcomes.map((o) => totals.get(o) ?? 0).join(' | ')} |`);
  if (process.argv.includes('--list')) {
    for (const [subsystem, m] of [...bySubsystem].sort()) {
      for (const o of ['unaccounted', 'wrong type', 'gap served', 'gap'] as const) for (const n of m.get(o) ?? []) console.log(`${subsystem}\t${o}\t${n}`);
    }
  }
} finally {
  await run.stop();
}
