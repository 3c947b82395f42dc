import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { bundleOrigin } from '../shared/bundle-sources.js';
// @ts-expect-error scripts/bundle.mjs is plain JavaScript, without declarations.
import { originTable } from '../scripts/bundle.mjs';
import { minimalBootstrap } from './helpers/bootstraps.js';
import { repoRoot, tempDir } from './helpers/cli.js';
import { startProxy, stopAllProxies, waitFor } from './helpers/proxy.js';

/**
 * A role's bundle is minified (scripts/bundle.mjs): log lines (%#) and profiles name the
 * TypeScript source line a place in it came from through the build's origin table, by line and
 * column (shared/bundle-sources.ts).
 */

const VLQ = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function vlq(value: number): string {
  let v = value < 0 ? (-value << 1) | 1 : value << 1;
  let out = '';
  do {
    let digit = v & 31;
    v >>>= 5;
    if (v) digit |= 32;
    out += VLQ[digit];
  } while (v);
  return out;
}

/** A source map's mappings from absolute [column, source, line] segments (0-based), per line. */
function mappings(lines: [number, number, number][][]): string {
  let source = 0;
  let line = 0;
  return lines
    .map((segments) => {
      let column = 0;
      return segments
        .map(([c, s, l]) => {
          const text = vlq(c - column) + vlq(s - source) + vlq(l - line) + vlq(0);
          [column, source, line] = [c, s, l];
          return text;
        })
        .join(',');
    })
    .join(';');
}

describe("a bundle's origin table", () => {
  const tmp = tempDir('bundle-origins-');
  after(() => tmp.cleanup());

  it('maps a line and column to the source line of the last mapping at or before it, across lines', () => {
    // Sources are relative to dist/roles/, as esbuild writes them.
    const map = {
      sources: ['../../worker/a.ts', '../../node_modules/dep/index.js', '../../shared/b.ts'],
      mappings: mappings([
        [[0, 0, 9], [40, 0, 10], [80, 1, 0], [120, 2, 4]],
        [],
        [[0, 2, 5], [10, 2, 5], [30, 0, 20]],
      ]),
    };
    const shift = 7;
    const bundle = join(tmp.dir, 'role.cjs');
    writeFileSync(`${bundle}.origins`, originTable(map, 3, shift));
    const at = (line: number, column: number) => bundleOrigin(bundle, line, column);
    // Line 1's columns are moved right by the wrapper written before it.
    assert.equal(at(1, 0), undefined, 'before the first mapping');
    assert.deepEqual(at(1, 7), { source: 'worker/a.ts', line: 10 });
    assert.deepEqual(at(1, 46), { source: 'worker/a.ts', line: 10 });
    assert.deepEqual(at(1, 47), { source: 'worker/a.ts', line: 11 });
    assert.equal(at(1, 90), undefined, "a dependency's code is not ours to name");
    assert.deepEqual(at(1, 127), { source: 'shared/b.ts', line: 5 });
    // A line without mappings, and the start of the next one, carry the last mapping on.
    assert.deepEqual(at(2, 50), { source: 'shared/b.ts', line: 5 });
    assert.deepEqual(at(3, 29), { source: 'shared/b.ts', line: 6 });
    assert.deepEqual(at(3, 30), { source: 'worker/a.ts', line: 21 });
    assert.deepEqual(at(3, 10_000), { source: 'worker/a.ts', line: 21 });
    assert.equal(at(0, 0), undefined);
    assert.equal(at(4, 0), undefined, 'past the last line');
    assert.equal(bundleOrigin(join(tmp.dir, 'missing.cjs'), 1, 0), undefined, 'a bundle without a table');
  });

  it('keeps an entry only where the origin changes', () => {
    const map = { sources: ['../../worker/a.ts'], mappings: mappings([[[0, 0, 0], [5, 0, 0], [9, 0, 0]], [[0, 0, 0], [3, 0, 1]]]) };
    const table = originTable(map, 2, 0) as Buffer;
    const words = new Uint32Array(table.buffer, table.byteOffset, 4);
    assert.equal(words[1], 2, 'lines');
    assert.equal(words[2], 2, 'entries');
  });
});

describe("the built proxy's log lines", () => {
  after(() => stopAllProxies());

  it("name the source line of each role's log call", async () => {
    const proxy = await startProxy(minimalBootstrap(), ['-l', 'debug', '--concurrency', '1']);
    const sites = await waitFor('log lines from the three roles', () => {
      const found = new Set([...proxy.output().matchAll(/\[((?:supervisor|worker|admin|shared)\/[\w/.-]+\.ts):(\d+)\]/g)].map((m) => `${m[1]}:${m[2]}`));
      const roles = new Set([...found].map((s) => s.split('/')[0]));
      return ['supervisor', 'worker', 'admin'].every((r) => roles.has(r)) ? found : undefined;
    });
    for (const site of sites) {
      const [file, line] = site.split(':') as [string, string];
      const text = readFileSync(join(repoRoot, file), 'utf8').split('\n')[Number(line) - 1] ?? '';
      assert.match(text, /\blog\w*\.(trace|debug|info|warn|error|critical)\(/, `${site} is not a log call: ${text.trim()}`);
    }
    await proxy.stop();
  });
});
