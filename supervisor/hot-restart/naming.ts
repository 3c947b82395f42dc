/**
 * The hot-restart domain sockets' names, as Envoy builds them: `<socket path>_<role>_<id>` with
 * `id = 10 × base id + epoch % 3` (at most three epochs live at once; scaling by 10 keeps base ids
 * apart). Each epoch binds its own `parent` socket (requests from its child arrive there) and its
 * own `child` socket (replies from its parent arrive there); it sends requests to the `parent`
 * socket of epoch − 1 and replies to the `child` socket of epoch + 1. A leading `@` is the Linux
 * abstract namespace; any other path is a file, whose mode is `--socket-mode`.
 */

export type SocketRole = 'parent' | 'child';

export const MAX_CONCURRENT_EPOCHS = 3;

export function domainSocketId(baseId: number, epoch: number): number {
  return baseId * 10 + (epoch % MAX_CONCURRENT_EPOCHS);
}

export function domainSocketName(socketPath: string, role: SocketRole, baseId: number, epoch: number): string {
  return `${socketPath}_${role}_${domainSocketId(baseId, epoch)}`;
}

/** The names one epoch binds and talks to. */
export function epochSockets(socketPath: string, baseId: number, epoch: number): { ownParent: string; ownChild: string; parentOfPrevious?: string; childOfNext: string } {
  return {
    ownParent: domainSocketName(socketPath, 'parent', baseId, epoch),
    ownChild: domainSocketName(socketPath, 'child', baseId, epoch),
    parentOfPrevious: epoch > 0 ? domainSocketName(socketPath, 'parent', baseId, epoch - 1) : undefined,
    childOfNext: domainSocketName(socketPath, 'child', baseId, epoch + 1),
  };
}
