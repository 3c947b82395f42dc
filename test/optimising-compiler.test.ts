import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cachedDataVersionTag } from 'node:v8';
import type { BootstrapSource, BootstrapSources } from '../shared/config/bootstrap.js';
import { READ_WITHOUT_OPTIMISING_LIMIT, readWithoutOptimising } from '../supervisor/optimising-compiler.js';
import { checked, IDLE_CHECKS_BEFORE_OFF, optimising, withoutOptimising, working } from '../shared/optimising-compiler.js';

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

/** The compiler while a process idles (shared/optimising-compiler.ts, driven by shared/idle-housekeeping.ts's checks). */
describe('the optimising compiler while idle', () => {
  it('goes off after enough idle checks in a row, and on again at the first busy one', () => {
    const on = cachedDataVersionTag();
    for (let i = 1; i < IDLE_CHECKS_BEFORE_OFF; i++) checked(true);
    assert.equal(cachedDataVersionTag(), on, 'not yet');
    checked(false); // a busy check starts the count again
    for (let i = 1; i < IDLE_CHECKS_BEFORE_OFF; i++) checked(true);
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

  it('comes back on when work arrives', () => {
    const on = cachedDataVersionTag();
    for (let i = 0; i < IDLE_CHECKS_BEFORE_OFF; i++) checked(true);
    assert.equal(optimising(), false);
    working();
    assert.ok(optimising());
    assert.equal(cachedDataVersionTag(), on);
    working(); // on already: nothing changes
    assert.equal(cachedDataVersionTag(), on);
  });

  it('a read without it, while idle, leaves it off after; while busy, on', () => {
    const on = cachedDataVersionTag();
    for (let i = 0; i < IDLE_CHECKS_BEFORE_OFF; i++) checked(true);
    const off = cachedDataVersionTag();
    assert.equal(readWithoutOptimising(file(10), () => cachedDataVersionTag()), off);
    assert.equal(cachedDataVersionTag(), off, 'still idle: still off');
    working();
    assert.equal(withoutOptimising(() => withoutOptimising(() => cachedDataVersionTag())), off, 'nested');
    assert.equal(cachedDataVersionTag(), on);
  });
});
