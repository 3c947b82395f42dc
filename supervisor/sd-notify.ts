import { getLogger } from '../shared/log/logger.js';
import { native } from '../shared/native/index.js';

/**
 * sd_notify(3) for systemd's `Type=notify` units (and for `proxy-hot-restarter`, which gives its
 * epochs a NOTIFY_SOCKET of its own): READY=1 once every worker serves, STOPPING=1 on the way
 * out, STATUS= lines an operator sees in `systemctl status`. `PROXY_EPOCH=` and `PROXY_PID=` tell
 * the hot restarter which epoch is speaking (systemd ignores assignments it does not know).
 * Without NOTIFY_SOCKET this does nothing.
 */

const log = getLogger('main', import.meta.url);

export function sdNotify(fields: Record<string, string | number>): void {
  const socket = process.env.NOTIFY_SOCKET;
  if (!socket) return;
  const message = Object.entries(fields)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
  try {
    native.sdNotify(socket, message);
  } catch (err) {
    log.warn(`sd_notify to ${socket} failed: ${(err as Error).message}`);
  }
}
