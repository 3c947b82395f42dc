// Node 20's test runner neither expands globs nor discovers .ts files, so this lists every
// test/**/*.test.ts and the unit tests beside each extension (shared/extensions/**/*.test.ts)
// explicitly, and fails when there is none (a run with no test is no pass).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
const only = process.argv.slice(2);
const files = only.length ? only : [...walk(join(root, 'test')), ...walk(join(root, 'shared/extensions'))].sort();
if (files.length === 0) {
  console.error('run-tests: no test files found under test/ or shared/extensions/');
  process.exit(1);
}
// A test that waits forever fails after 3 minutes instead of holding CI until its own limit.
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-timeout=180000', '--test-reporter=spec', ...files], { stdio: 'inherit', cwd: root });
process.exit(result.status ?? 1);
