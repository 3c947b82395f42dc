/** Whether process `pid` exists (EPERM: it does, as another user's). */
export function processAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Calls `onGone` once, when process `pid` (not our child: we get no exit event for it) no longer
 * exists; polled every `intervalMs`, without keeping the event loop alive. Returns a cancel.
 */
export function watchProcess(pid: number, intervalMs: number, onGone: () => void): () => void {
  const timer = setInterval(() => {
    if (processAlive(pid)) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
