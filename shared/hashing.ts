import xxhash from 'xxhash-wasm';

/**
 * Envoy's HashUtil::xxHash64 (XXH64, seed 0 unless given), from xxhash-wasm: the hash that
 * consistent-hash load balancing and route hash policies use, so that a key picks the same host
 * in every worker (and as Envoy would pick it from the same hosts). Ready once a worker has called
 * initHashing() at its start.
 */

let h64: ((input: string, seed?: bigint) => bigint) | undefined;

export async function initHashing(): Promise<void> {
  h64 ??= (await xxhash()).h64;
}

export function xxHash64(input: string, seed = 0n): bigint {
  if (!h64) throw new Error('hashing is not initialised in this process (initHashing)');
  return h64(input, seed);
}
