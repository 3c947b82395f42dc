import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { runProxy } from './helpers/cli.js';

// Every bootstrap under examples/ is one a user may copy: each must validate.
describe('examples', () => {
  for (const file of readdirSync('examples').filter((f) => /\.(ya?ml|json|pb_text)$/.test(f))) {
    it(`examples/${file} validates`, async () => {
      const out = await runProxy(['--mode', 'validate', '-c', `examples/${file}`]);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, `configuration 'examples/${file}' OK\n`);
    });
  }
});
