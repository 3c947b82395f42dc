import { SocketChannelParent } from '../shared/socket-channel.js';
import { forkChild } from './children.js';
import type { BareWorker } from './worker-descriptors.js';

/**
 * Workers forked at the supervisor's first step, before it loads and validates the
 * configuration: a worker's own start (Node's boot, loading its bundle: ~100 ms) then runs beside
 * the supervisor's (the schema, the configuration, the hot-restart hand-shake) instead of after
 * it, which a cold start and every hot restart's hand-over wait for. A spare holds only its
 * socket channel; it is given its descriptors and configuration when the tree starts its worker
 * (WorkerDescriptors). Spares the tree never took (the configuration was refused, the hot
 * restart failed) are killed before the supervisor exits; they exit quietly.
 */

const spares = new Map<string, BareWorker>();

/** Forks a bare worker for each name (`worker_0` …). */
export function forkSpareWorkers(names: string[]): void {
  for (const name of names) {
    const channel = new SocketChannelParent();
    const process = forkChild('worker', name, [channel.childEnd]);
    channel.releaseChildEnd();
    // Until it is taken, its failures are not the supervisor's to report: a fresh fork replaces it.
    process.on('error', () => {});
    spares.set(name, { process, channel });
  }
}

/** The spare forked for `name`, if it is still alive; it is the caller's from now on. */
export function takeSpareWorker(name: string): BareWorker | undefined {
  const spare = spares.get(name);
  if (!spare) return undefined;
  spares.delete(name);
  if (spare.process.exitCode !== null || spare.process.signalCode !== null || !spare.process.connected) {
    discard(spare);
    return undefined;
  }
  return spare;
}

/** Kills every spare not taken. */
export function discardSpareWorkers(): void {
  for (const spare of spares.values()) discard(spare);
  spares.clear();
}

function discard(spare: BareWorker): void {
  spare.channel.close();
  if (spare.process.connected) spare.process.disconnect();
  spare.process.kill('SIGKILL');
}
