#!/usr/bin/env node
// The `proxy` command: runs the compiled supervisor (start-up time counts on every hot restart).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/supervisor/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('proxy: the build is missing (dist/supervisor/main.js); run `npm ci` or `npm run build` first\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main();
