#!/usr/bin/env node
// The `proxy` command: runs the supervisor's bundle (start-up time counts on every hot restart;
// bin/role-launcher.cjs loads it with V8's code cache).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const bundle = new URL('../dist/roles/supervisor.cjs', import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write('proxy: the build is missing (dist/roles/supervisor.cjs); run `npm ci` or `npm run build` first\n');
  process.exit(1);
}
const { load } = createRequire(import.meta.url)('./role-launcher.cjs');
process.exitCode = await load('supervisor').main();
