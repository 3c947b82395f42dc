import { writeFileSync } from 'node:fs';
import { cryptoModule } from '../../shared/builtins.js';
import { getLogger } from '../../shared/log/logger.js';
import { domainSocketId } from './naming.js';
import { HotRestartChannel, type ChannelOptions } from './protocol.js';
import { SECRET_BYTES } from './seal.js';
import { HotRestartError, SharedMemoryRegion } from './shared-memory.js';

/**
 * Who this epoch is among the hot-restart epochs of one base id: its base id (given, or picked
 * with --use-dynamic-base-id), its two domain sockets, and the shared-memory region with this
 * epoch marked as initializing. Built first thing at start-up, as Envoy builds its restarter.
 */

const log = getLogger('main', import.meta.url);
const DYNAMIC_BASE_ID_TRIES = 100;

export interface IdentityOptions {
  baseId: number;
  useDynamicBaseId: boolean;
  baseIdPath: string;
  restartEpoch: number;
  socketPath: string;
  socketMode: number;
  /** Root may talk to this family's sockets though the proxy runs as another user. */
  trustRoot: boolean;
  startTimeMs: number;
  onRequest: ChannelOptions['onRequest'];
  /** Tests: where the region lives, and the source of dynamic ids. */
  sharedMemoryDir?: string;
  pickBaseId?: () => number;
}

export interface HotRestartIdentity {
  baseId: number;
  channel: HotRestartChannel;
  region: SharedMemoryRegion;
}

function bind(o: IdentityOptions, baseId: number, secret: Buffer): HotRestartChannel {
  try {
    return new HotRestartChannel({ socketPath: o.socketPath, socketMode: o.socketMode, baseId, epoch: o.restartEpoch, secret, trustRoot: o.trustRoot, onRequest: o.onRequest });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const errno = e.code === 'EADDRINUSE' ? 98 : (e.errno ?? 0);
    const envoys = `unable to bind domain socket with base_id=${domainSocketId(baseId, 0)}, id=${o.restartEpoch}, errno=${Math.abs(errno)} (see --base-id option)`;
    throw Object.assign(new HotRestartError(e.code === 'EADDRINUSE' ? `${envoys}: ${takenHint(baseId, o.restartEpoch)}` : envoys), { code: e.code });
  }
}

/** Why a socket slot is taken, and what to pass at that epoch (--use-dynamic-base-id is for epoch 0 only, as in Envoy). */
function takenHint(baseId: number, epoch: number): string {
  if (epoch === 0) return `another proxy on this machine uses base id ${baseId}; pass another --base-id, or --use-dynamic-base-id (with --base-id-path to learn the one picked)`;
  return `epoch ${epoch} of base id ${baseId} is running already; a hot restart takes the next epoch (--restart-epoch ${epoch + 1} --base-id ${baseId}), another proxy another --base-id`;
}

/**
 * Epoch 0 binds first (a taken slot is how a dynamic base id is found to be in use), then writes
 * the region with the new family secret; later epochs read the secret from the region first.
 */
function attempt(o: IdentityOptions, baseId: number): HotRestartIdentity {
  if (o.restartEpoch > 0) {
    const region = SharedMemoryRegion.open(baseId, o.sharedMemoryDir);
    const channel = bind(o, baseId, region.secret);
    try {
      region.beginInitializing();
    } catch (err) {
      channel.close();
      throw err;
    }
    return { baseId, channel, region };
  }
  const secret = cryptoModule().randomBytes(SECRET_BYTES);
  const channel = bind(o, baseId, secret);
  try {
    const region = SharedMemoryRegion.create(baseId, o.startTimeMs, secret, o.sharedMemoryDir);
    region.beginInitializing();
    return { baseId, channel, region };
  } catch (err) {
    channel.close();
    throw err;
  }
}

export function establishIdentity(o: IdentityOptions): HotRestartIdentity {
  let identity: HotRestartIdentity | undefined;
  if (o.useDynamicBaseId) {
    const pick = o.pickBaseId ?? (() => cryptoModule().randomInt(0, 0x10000000)); // 28 bits: × 10 still fits 32
    for (let i = 0; i < DYNAMIC_BASE_ID_TRIES && !identity; i++) {
      const candidate = pick();
      try {
        identity = attempt(o, candidate);
      } catch (err) {
        // Taken: the socket slot (EADDRINUSE) or the region (a live process uses it).
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' && !/is in use by pid/.test((err as Error).message)) throw err;
        log.debug(`base id ${candidate} is taken; trying another`);
      }
    }
    if (!identity) throw new HotRestartError('unable to select a dynamic base id');
  } else {
    identity = attempt(o, o.baseId);
  }
  if (o.baseIdPath) {
    try {
      writeFileSync(o.baseIdPath, String(identity.baseId));
    } catch (err) {
      log.critical(`cannot open base id output file ${o.baseIdPath} for writing: ${(err as Error).message}`);
    }
  }
  return identity;
}
