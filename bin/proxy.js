#!/usr/bin/env node
// The `proxy` command: runs the supervisor's bundle (start-up time counts on every hot restart;
// bin/role-launcher.cjs loads it with V8's code cache). CommonJS (bin/package.json says so):
// Node's ES module loader, which an ES module entry point starts, cost every start ~14 ms
// (a bare entry point: 57 ms against 43 ms, medians of 20).
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

// `proxy route-check …`: Envoy's router_check_tool on this proxy's route table (route-check/main.ts).
if (process.argv[2] === 'route-check') {
  const entry = join(__dirname, '../dist/route-check/main.js');
  if (!existsSync(entry)) {
    process.stderr.write('proxy: the build is missing (dist/route-check/main.js); run `npm ci` or `npm run build` first\n');
    process.exit(1);
  }
  const { pathToFileURL } = require('node:url');
  import(pathToFileURL(entry).href).then(({ main }) =>
    main(process.argv.slice(3)).then((code) => {
      process.exitCode = code;
    }),
  );
  return;
}
if (!existsSync(join(__dirname, '../dist/roles/supervisor.cjs'))) {
  process.stderr.write('proxy: the build is missing (dist/roles/supervisor.cjs); run `npm ci` or `npm run build` first\n');
  process.exit(1);
}
const { load } = require('./role-launcher.cjs');
load('supervisor')
  .main()
  .then((code) => {
    process.exitCode = code;
  });
