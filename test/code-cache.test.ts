import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/**
 * The build's code caches (dist/roles/<role>.cjs.v8cache: scripts/bundle.mjs writes them from the
 * top level, scripts/warm-code-cache.mjs again from a run that served requests) must be ones V8
 * takes: a cache made under other V8 flags (one set before it was written, say) is silently
 * refused, and every start then compiles its bundle from source.
 */

const roles = join(import.meta.dirname, '..', 'dist', 'roles');
const launcher = createRequire(import.meta.url)('../bin/role-launcher.cjs') as { v8FlagsOf(role: string): string[] };

describe("the build's code caches", () => {
  for (const role of ['supervisor', 'worker', 'admin']) {
    it(`are taken by V8 for the ${role}'s bundle, under the role's V8 flags`, () => {
      // A process of its own: the role's flags (bin/role-launcher.cjs) are the ones it runs with.
      const check = [
        `const { readFileSync } = require('node:fs');`,
        `const file = ${JSON.stringify(join(roles, `${role}.cjs`))};`,
        `const script = new (require('node:vm').Script)(require('node:module').wrap(readFileSync(file, 'latin1')), { filename: file, cachedData: readFileSync(file + '.v8cache') });`,
        `process.stdout.write(String(script.cachedDataRejected));`,
      ].join('\n');
      const run = spawnSync(process.execPath, [...launcher.v8FlagsOf(role), '-e', check], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout, 'false');
    });
  }
});
