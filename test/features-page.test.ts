import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generate, generatedFile } from '../scripts/generate-features-page.js';

test('docs/features.md is what the extension and supported-field tables generate (`npm run generate` after a change)', () => {
  assert.equal(readFileSync(generatedFile, 'utf8'), generate());
});
