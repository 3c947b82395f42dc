import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import xxhash from 'xxhash-wasm';
import { xxHash64, xxhashWasmFile } from '../shared/hashing.js';

/**
 * xxHash64 runs xxhash-wasm's module, compiled on first use (shared/hashing.ts): the same values
 * as XXH64's reference and as the library's own entry point.
 */
describe('xxHash64', () => {
  it("finds the library's WebAssembly module", () => {
    assert.ok(existsSync(xxhashWasmFile()), xxhashWasmFile());
  });

  it("gives XXH64's reference values", () => {
    // XXH64 with seed 0, as xxHash's documentation and test vectors give them.
    assert.equal(xxHash64(''), 0xef46db3751d8e999n);
    assert.equal(xxHash64('a'), 0xd24ec4f1a98c6e5bn);
    assert.equal(xxHash64('abc'), 0x44bc2cf5ad770999n);
  });

  it("agrees with xxhash-wasm's entry point on strings of every length, seeds and non-ASCII text", async () => {
    const { h64 } = await xxhash();
    const inputs = ['10.0.0.1:80_0', 'user-42', 'é€𝄞 mixed ✓', 'x'.repeat(70_000)];
    for (let n = 0; n < 200; n++) inputs.push(randomBytes(n).toString('latin1'));
    for (const input of inputs) {
      for (const seed of [0n, 1n, 0xffffffffffffffffn, 0x8000000000000000n]) {
        assert.equal(xxHash64(input, seed), h64(input, seed), `${JSON.stringify(input.slice(0, 20))} (length ${input.length}), seed ${seed}`);
      }
    }
  });
});
