import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Script } from 'node:vm';

/**
 * The build's code caches (dist/roles/<role>.cjs.v8cache: scripts/bundle.mjs writes them from the
 * top level, scripts/warm-code-cache.mjs again from a run that served requests) must be ones V8
 * takes: a cache made under other V8 flags (one set before it was written, say) is silently
 * refused, and every start then compiles its bundle from source.
 */

const roles = join(import.meta.dirname, '..', 'dist', 'roles');

describe("the build's code caches", () => {
  for (const role of ['supervisor', 'worker', 'admin']) {
    it(`are taken by V8 for the ${role}'s bundle`, () => {
      const file = join(roles, `${role}.cjs`);
      const cachedData = readFileSync(`${file}.v8cache`);
      const script = new Script(Module.wrap(readFileSync(file, 'latin1')), { filename: file, cachedData });
      assert.equal(script.cachedDataRejected, false);
    });
  }
});
