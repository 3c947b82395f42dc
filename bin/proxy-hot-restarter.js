#!/usr/bin/env node
// `proxy-hot-restarter <start script>`: runs epochs of the proxy and hot restarts them on SIGHUP
// (Envoy's hot-restarter.py usage). The start script gets RESTART_EPOCH and passes
// `--restart-epoch "$RESTART_EPOCH"` to `proxy`.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/restarter/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('proxy-hot-restarter: the build is missing (dist/restarter/main.js); run `npm ci` or `npm run build` first\n');
  process.exit(1);
}
const { main } = await import(entry.href);
main(process.argv.slice(2));
