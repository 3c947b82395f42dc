import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cachedDataVersionTag, getHeapSpaceStatistics } from 'node:v8';
import type { BootstrapSource, BootstrapSources } from '../shared/config/bootstrap.js';
import { READ_WITHOUT_OPTIMISING_LIMIT, readWithoutOptimising } from '../supervisor/optimising-compiler.js';
import { optimising, withoutOptimising } from '../shared/optimising-compiler.js';
import { checked, IDLE_CHECKS_BEFORE_QUIET, IDLE_CHECKS_BETWEEN_SHRINKS, working } from '../shared/idle-housekeeping.js';

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

/** A process's idle spell (shared/idle-housekeeping.ts): the compiler off, V8's heap shrunk. */
describe('an idle spell', () => {
  const youngGeneration = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.physical_space_size;

  it('turns the compiler off after enough idle checks in a row, and on again at the first busy one', () => {
    const on = cachedDataVersionTag();
    for (let i = 1; i < IDLE_CHECKS_BEFORE_QUIET; i++) checked(true);
    assert.equal(cachedDataVersionTag(), on, 'not yet');
    checked(false); // a busy check starts the count again
    for (let i = 1; i < IDLE_CHECKS_BEFORE_QUIET; i++) checked(true);
    assert.ok(optimising());
    checked(true);
    assert.equal(optimising(), false);
    assert.notEqual(cachedDataVersionTag(), on, 'off: V8 would refuse code caches made with it on');
    checked(true);
    assert.equal(optimising(), false, 'and stays off while idle');
    checked(false);
    assert.ok(optimising());
    assert.equal(cachedDataVersionTag(), on, 'on again: the default flag hash');
  });

  it('ends when work arrives', () => {
    const on = cachedDataVersionTag();
    for (let i = 0; i < IDLE_CHECKS_BEFORE_QUIET; i++) checked(true);
    assert.equal(optimising(), false);
    working();
    assert.ok(optimising());
    assert.equal(cachedDataVersionTag(), on);
    working(); // no spell: nothing changes
    assert.equal(cachedDataVersionTag(), on);
  });

  it("shrinks V8's young generation when it begins, and again while it lasts", () => {
    const garbage = () => {
      let kept: object[] = [];
      for (let i = 0; i < 50_000; i++) {
        kept.push({ i, text: `x${i}` });
        if (kept.length > 100) kept = [];
      }
    };
    garbage();
    const grown = youngGeneration();
    for (let i = 0; i < IDLE_CHECKS_BEFORE_QUIET; i++) checked(true);
    const shrunk = youngGeneration();
    assert.ok(shrunk < grown, `${shrunk} bytes after, ${grown} before`);
    garbage();
    assert.ok(youngGeneration() > shrunk, 'grown again');
    for (let i = 0; i < IDLE_CHECKS_BETWEEN_SHRINKS; i++) checked(true);
    assert.equal(youngGeneration(), shrunk, 'shrunk again, a while later');
    working();
  });

  it('a read without the compiler, while idle, leaves it off after; while working, on', () => {
    const on = cachedDataVersionTag();
    for (let i = 0; i < IDLE_CHECKS_BEFORE_QUIET; i++) checked(true);
    const off = cachedDataVersionTag();
    assert.equal(readWithoutOptimising(file(10), () => cachedDataVersionTag()), off);
    assert.equal(cachedDataVersionTag(), off, 'still idle: still off');
    working();
    assert.equal(withoutOptimising(() => withoutOptimising(() => cachedDataVersionTag())), off, 'nested');
    assert.equal(cachedDataVersionTag(), on);
  });
});
