import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
// @ts-expect-error scripts/generate-hot-restart-messages.mjs is plain JavaScript, without declarations.
import { generate, generatedFile } from '../scripts/generate-hot-restart-messages.mjs';

test('supervisor/hot-restart/messages.cjs is what messages.proto generates (`npm run generate` after a change)', async () => {
  assert.equal(readFileSync(generatedFile, 'utf8'), await generate());
});
