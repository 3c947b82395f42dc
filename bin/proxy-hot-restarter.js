#!/usr/bin/env node
// `proxy-hot-restarter <start script>`: runs epochs of the proxy and hot restarts them on SIGHUP
// (Envoy's hot-restarter.py usage). The start script gets RESTART_EPOCH and passes
// `--restart-epoch "$RESTART_EPOCH"` to `proxy`. CommonJS, as bin/package.json says; the
// restarter itself is an ES module, imported.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

const entry = join(__dirname, '../dist/restarter/main.js');
if (!existsSync(entry)) {
  process.stderr.write('proxy-hot-restarter: the build is missing (dist/restarter/main.js); run `npm ci` or `npm run build` first\n');
  process.exit(1);
}
import(pathToFileURL(entry).href).then(({ main }) => main(process.argv.slice(2)));
