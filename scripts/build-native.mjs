// Builds shared/native/*.c into build/native.node with the system C compiler and the
// headers of the running Node: no node-gyp, no python, no network. Run by the root package's
// own `install` script, so `npm ci` builds it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
if (process.env.npm_command === 'exec') process.exit(0); // npx re-running the checkout's scripts
const candidates = [resolve(process.execPath, '../../include/node'), '/usr/include/node', '/usr/local/include/node'];
const include = candidates.find((dir) => existsSync(join(dir, 'node_api.h')));
if (!include) {
  console.error(`build-native: Node's headers (node_api.h) are not in ${candidates.join(', ')}; install Node with its headers`);
  process.exit(1);
}
const out = join(root, 'build', 'native.node');
const sources = join(root, 'shared/native');
mkdirSync(dirname(out), { recursive: true });
const started = Date.now();
execFileSync(process.env.CC || 'cc', [
  '-O2', '-fPIC', '-shared', '-std=gnu11', '-Wall', '-Wextra', '-Wno-unused-parameter', '-Werror',
  '-DNODE_GYP_MODULE_NAME=native', `-I${include}`,
  ...readdirSync(sources).filter((f) => f.endsWith('.c')).sort().map((f) => join(sources, f)), '-o', out,
], { stdio: 'inherit' });
console.log(`build-native: ${out} in ${Date.now() - started} ms`);
