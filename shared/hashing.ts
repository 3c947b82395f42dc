import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Envoy's HashUtil::xxHash64 (XXH64, seed 0 unless given): the hash that consistent-hash load
 * balancing, route hash policies and the xDS `version` gauges use, so that a key picks the same
 * host in every worker (and as Envoy would pick it from the same hosts).
 *
 * It runs xxhash-wasm's WebAssembly module (XXH64 in 3 KB), compiled the first time a hash is
 * asked for rather than by every process at start: compiling any WebAssembly brings V8's
 * WebAssembly compiler into the process, measured at 0.9-1.0 MB of its resident memory (the
 * compiler's code and the compiled module), and a process on a configuration without hash
 * policies, consistent-hash clusters or xDS never hashes. Compiling it synchronously is allowed
 * in Node for a module of any size, and takes well under a millisecond for this one.
 * xxhash-wasm's own entry point only compiles asynchronously, so the module is read from its
 * package and its one export used here, `xxh64(offset, length, seed)`, called directly.
 */
interface Xxh64Exports {
  mem: { buffer: ArrayBuffer; grow(pages: number): number };
  xxh64(offset: number, length: number, seed: bigint): bigint;
}

/** The WebAssembly API (the compiler's libraries here do not declare it). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: object };
}
const { WebAssembly } = globalThis as unknown as { WebAssembly: WebAssemblyApi };

/** Where xxhash-wasm 1.1 keeps its module (its `exports` map names no file: found from its entry). */
export function xxhashWasmFile(): string {
  return join(dirname(createRequire(import.meta.url).resolve('xxhash-wasm')), '..', 'workerd', 'xxhash.wasm');
}

let wasm: Xxh64Exports | undefined;
let memory = new Uint8Array(0);
const encoder = new TextEncoder();
const U64 = (1n << 64n) - 1n;

function instance(): Xxh64Exports {
  if (!wasm) {
    wasm = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(xxhashWasmFile()))).exports as unknown as Xxh64Exports;
    memory = new Uint8Array(wasm.mem.buffer);
  }
  return wasm;
}

export function xxHash64(input: string, seed = 0n): bigint {
  const exports = instance();
  // UTF-8 takes at most three bytes per UTF-16 unit.
  const room = 3 * input.length;
  if (memory.byteLength < room) {
    exports.mem.grow(Math.ceil((room - memory.byteLength) / 65536));
    memory = new Uint8Array(exports.mem.buffer);
  }
  const { written } = encoder.encodeInto(input, memory);
  // The module returns an i64, which JavaScript sees signed: Envoy's hash is the unsigned one.
  return exports.xxh64(0, written, seed) & U64;
}
