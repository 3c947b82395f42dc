#!/usr/bin/env node
// The `proxy` command: runs the supervisor's bundle (start-up time counts on every hot restart;
// bin/role-launcher.cjs loads it with V8's code cache). CommonJS (bin/package.json says so):
// Node's ES module loader, which an ES module entry point starts, cost every start ~14 ms
// (a bare entry point: 57 ms against 43 ms, medians of 20).
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

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
