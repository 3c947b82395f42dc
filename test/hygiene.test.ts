import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { repoRoot } from './helpers/cli.js';

/**
 * The rules that keep `npm test` honest on any machine, checked over the tests, their helpers,
 * the examples and the scripts: nothing names a file that only exists where someone made it by
 * hand, and no test waits a fixed time for something to happen.
 */

const self = relative(repoRoot, fileURLToPath(import.meta.url));

function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return files(path, keep);
    return keep(e.name) ? [path] : [];
  });
}

/** `path:line: text` for every line of `paths` that `pattern` matches. */
function offending(paths: string[], pattern: RegExp, allowed: (lines: string[], i: number) => boolean = () => false): string[] {
  return paths.flatMap((path) => {
    const lines = readFileSync(join(repoRoot, path), 'utf8').split('\n');
    return lines.flatMap((line, i) => (pattern.test(line) && !allowed(lines, i) ? [`${path}:${i + 1}: ${line.trim()}`] : []));
  });
}

describe('test hygiene', () => {
  it('no test, helper, example or script names a fixed path outside its own temporary directory', () => {
    const text = (name: string) => /\.(ts|mjs|js|ya?ml|json|sh|service|md)$/.test(name);
    const extensionTests = files('shared/extensions', (n) => n.endsWith('.test.ts'));
    const paths = [...files('test', text), ...extensionTests, ...files('examples', text), ...files('scripts', text), ...files('docs', text), 'README.md'].filter((p) => p !== self);
    // A name directly under the system's temporary directory, or anything in the home directory
    // (by tilde, by $HOME or by homedir()): each is shared with every other run and user.
    const fixed = offending(paths, /(["'`\s(=]\/tmp\/[\w.-]|["'`\s(=]~\/|\$HOME\/|homedir\(\))/);
    assert.deepEqual(fixed, [], 'use a directory from mkdtemp under os.tmpdir() (test/helpers/cli.ts tempDir), or a file that comes with the repository');
  });

  it('no test sleeps to wait for something to happen', () => {
    const tests = [...files('test', (n) => n.endsWith('.ts')), ...files('shared/extensions', (n) => n.endsWith('.test.ts'))].filter((p) => p !== self && !p.startsWith(join('test', 'helpers')));
    // A sleep is only allowed to prove that something did NOT happen, and says so just above.
    const sleeps = offending(tests, /new Promise(<[^>]*>)?\(\(\w+\) => setTimeout\(\w+, /, (lines, i) =>
      lines.slice(Math.max(0, i - 3), i).some((l) => l.includes('proves an absence')));
    assert.deepEqual(sleeps, [], 'wait for the observable condition (waitFor, withDeadline in test/helpers/proxy.ts), or, for a pause that proves something did not happen, say "proves an absence" in a comment above it');
  });
});
