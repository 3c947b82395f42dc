import { openSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { cryptoModule } from '../shared/builtins.js';
import { native } from '../shared/native/index.js';
import { sharedMemoryDir } from './hot-restart/shared-memory.js';

/**
 * Memory the whole tree maps: created and sized in /dev/shm, kept open as a descriptor the
 * workers inherit, and unlinked at once, so nothing is left behind however the tree ends.
 */
export function createTreeRegion(name: string, bytes: number): { buffer: ArrayBuffer; fd: number } {
  const path = join(sharedMemoryDir(), `proxy_${name}_${process.pid}_${cryptoModule().randomBytes(4).toString('hex')}`);
  const buffer = native.mapShared(path, bytes, true);
  const fd = openSync(path, 'r+');
  unlinkSync(path);
  return { buffer, fd };
}
