import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cachedDataVersionTag } from 'node:v8';
import type { BootstrapSource, BootstrapSources } from '../shared/config/bootstrap.js';
import { READ_WITHOUT_OPTIMISING_LIMIT, readWithoutOptimising } from '../supervisor/optimising-compiler.js';

/** Sources of `bytes` bytes: a file, or --config-yaml. */
const sources = (configYaml: string, file?: Buffer): BootstrapSources => ({ options: { configPath: file ? 'bootstrap.yaml' : '', configYaml } as BootstrapSource, file, key: Buffer.alloc(32) });
const file = (bytes: number) => sources('', Buffer.alloc(bytes, 32));
const yaml = (bytes: number) => sources(' '.repeat(bytes));

/**
 * A small configuration is read without V8's optimising compiler, which is back afterwards
 * (supervisor/optimising-compiler.ts). V8's code-cache tag (its version, flag hash and CPU
 * features) shows the flag: V8 takes a code cache only under the tag it was made with.
 */
describe('reading without the optimising compiler', () => {
  it('turns the compiler off for a small read and back on after it, flag hash and all', () => {
    const before = cachedDataVersionTag();
    const inside = readWithoutOptimising(file(1500), () => cachedDataVersionTag());
    assert.notEqual(inside, before, 'the flag is set during the read');
    assert.equal(cachedDataVersionTag(), before, 'code caches made under the default flags are taken again');
  });

  it('turns it back on when the read throws', () => {
    const before = cachedDataVersionTag();
    assert.throws(() => readWithoutOptimising(yaml(10), () => { throw new Error('unreadable'); }), /unreadable/);
    assert.equal(cachedDataVersionTag(), before);
  });

  it('leaves it on for a large configuration', () => {
    const before = cachedDataVersionTag();
    assert.equal(readWithoutOptimising(file(READ_WITHOUT_OPTIMISING_LIMIT + 1), () => cachedDataVersionTag()), before);
    assert.equal(readWithoutOptimising(yaml(READ_WITHOUT_OPTIMISING_LIMIT + 1), () => cachedDataVersionTag()), before);
  });
});
