import { native } from './native/index.js';

/**
 * Fills `buffer` from the kernel's CSPRNG (getrandom(2), through the native addon), the source
 * node:crypto's randomFillSync is seeded from. For random ids drawn in batches (x-request-id,
 * trace and span ids), one system call refills a batch. node:crypto is not loaded for them:
 * its JavaScript and OpenSSL's initialisation are 0.65 MB of a process's memory (a bare Node
 * process with node:http loaded, measured with and without), which a worker serving plain HTTP
 * needs for nothing else.
 */
export function fillRandom(buffer: Uint8Array): void {
  native.randomFill(buffer);
}
