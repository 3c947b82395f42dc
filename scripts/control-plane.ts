// A tiny xDS control plane, to see a proxy of the fleet change without a restart (examples/ads.yaml).
// It serves ADS (state of the world and incremental) on 127.0.0.1:<port> from a resources file,
// pushes a new version to every connected proxy each time the file changes, and prints each
// proxy's ACK or NACK (with why).
// Usage: node --import tsx scripts/control-plane.ts examples/ads/resources.yaml [--port 18000] [--host 127.0.0.1]
// The file (YAML or JSON) holds lists by type, each resource as Envoy's v3 API has it:
//   clusters: [...]  endpoints: [...]  listeners: [...]  routes: [...]
import { readFileSync, watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { load } from 'js-yaml';
import type { JsonObject } from '../shared/config/proto-json.js';
import { TestControlPlane } from '../test/helpers/control-plane.js';

const args = process.argv.slice(2);
const file = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--port' && args[i - 1] !== '--host');
const port = args.includes('--port') ? Number(args[args.indexOf('--port') + 1]) : 18000;
// In a pod: --host 0.0.0.0, so that the proxies reach it through its Service.
const host = args.includes('--host') ? args[args.indexOf('--host') + 1]! : '127.0.0.1';
if (!file) {
  console.error('usage: node --import tsx scripts/control-plane.ts <resources.yaml> [--port 18000] [--host 127.0.0.1]');
  process.exit(2);
}
const path = resolve(file);

const cp = await TestControlPlane.start(port, undefined, host);
let version = 0;
let last = '';

/** Reads the file and pushes a new version of each type to every proxy (unless nothing changed). */
function publish(): void {
  let doc: Record<string, JsonObject[]>;
  try {
    doc = (load(readFileSync(path, 'utf8')) ?? {}) as Record<string, JsonObject[]>;
  } catch (err) {
    console.error(`${path}: ${(err as Error).message} (nothing pushed)`);
    return;
  }
  const text = JSON.stringify(doc);
  if (text === last) return;
  last = text;
  version++;
  const counts = cp.setAll(doc, `v${version}`);
  console.log(`version v${version}: ${Object.entries(counts).map(([key, n]) => `${n} ${key}`).join(', ')}`);
}

cp.onRequest = (rq) => {
  const node = String((rq.node as JsonObject | undefined)?.id ?? 'a proxy');
  const type = String(rq.type_url ?? '').split('.').pop();
  const error = rq.error_detail as JsonObject | undefined;
  if (error) console.log(`${node}: NACK ${type} (still on '${String(rq.version_info ?? '')}'): ${String(error.message)}`);
  else if (rq.response_nonce) console.log(`${node}: ACK ${type} ${String(rq.version_info ?? '')}`.trimEnd());
  else console.log(`${node}: asks for ${type}${Array.isArray(rq.resource_names) ? ` ${(rq.resource_names as string[]).join(', ')}` : ''}`);
};

publish();
// Editors save by rename or in place: either way, read again (a half-written file is reported and skipped).
let timer: NodeJS.Timeout | undefined;
watch(dirname(path), (_event, name) => {
  if (name !== basename(path)) return;
  clearTimeout(timer);
  timer = setTimeout(publish, 100);
});
console.log(`serving ADS on 127.0.0.1:${cp.port} from ${path}; edit the file to push a new version`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => (cp.stop(), process.exit(0)));
