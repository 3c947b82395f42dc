import type { LogSettingsMessage } from './ipc.js';
import { configureLogging, flushLogs, getLogger, reopenLogs, setLogRole } from './log/logger.js';

/**
 * What every child of the supervisor (workers, the admin process) does the same way:
 *
 * - It never outlives the supervisor: when the IPC channel closes (the supervisor exited or was
 *   killed), it exits at once. No orphans.
 * - SIGINT is ignored: a Ctrl-C reaches the whole process group, and shutting the tree down is
 *   the supervisor's job (it sends `shutdown`). SIGTERM (systemd signals the whole cgroup, or an
 *   operator signals one child) is an orderly stop. SIGHUP is ignored, as Envoy does.
 * - SIGUSR1 reopens the log file (Node would otherwise start its inspector on SIGUSR1).
 */

const log = getLogger('main', import.meta.url);
/** The child had its init (its log settings came with it). */
let started = false;

export function childRole(): string {
  return process.argv[2] ?? 'child';
}

export function setUpChild(onStop: (graceMs: number) => void): void {
  setLogRole(childRole());
  process.on('disconnect', () => {
    // A spare never started (supervisor/spares.ts) has nothing to say.
    if (started) log.warn('the supervisor is gone; exiting');
    flushLogs();
    process.exit(0);
  });
  process.on('SIGINT', () => {});
  process.on('SIGHUP', () => {});
  process.on('SIGUSR1', reopenLogs);
  process.on('SIGTERM', () => onStop(0));
}

export function applyLogSettings(s: LogSettingsMessage): void {
  started = true;
  configureLogging({ ...s, componentLevels: new Map(s.componentLevels) });
}
