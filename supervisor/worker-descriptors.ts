import type { InheritedSocket } from '../shared/ipc.js';
import { SocketChannelParent } from '../shared/socket-channel.js';
import type { ListenSocket, ListenSockets } from './listen-sockets.js';

/**
 * The descriptors a worker gets: at its fork, the circuit-breaker region (fd 4), the token-bucket
 * region (fd 5), its end of a socket channel (fd 6) and its descriptors of every listening socket
 * open then (fd 7 on: with reuse_port, its own); afterwards, each socket opened later, sent on its channel. A replacement worker gets a
 * new channel.
 */

const BREAKER_CHILD_FD = 4;
const BUCKET_CHILD_FD = 5;
const SOCKET_CHANNEL_CHILD_FD = 6;
const FIRST_SOCKET_CHILD_FD = 7;

export class WorkerDescriptors {
  static readonly breakerChildFd = BREAKER_CHILD_FD;
  static readonly bucketChildFd = BUCKET_CHILD_FD;
  private readonly channels: (SocketChannelParent | undefined)[] = [];
  private readonly inherited: InheritedSocket[][] = [];

  constructor(
    private readonly sockets: ListenSockets,
    private readonly breakerFd: number,
    private readonly bucketFd: number,
  ) {}

  /** The stdio descriptors for forking worker `i` (after stdin, stdout, stderr and IPC). */
  forFork(i: number): number[] {
    this.channels[i]?.close();
    const channel = (this.channels[i] = new SocketChannelParent());
    const sockets = this.sockets.forChild(FIRST_SOCKET_CHILD_FD, i);
    this.inherited[i] = sockets.sockets;
    return [this.breakerFd, this.bucketFd, channel.childEnd, ...sockets.descriptors];
  }

  /** Worker `i` was forked: what its init message says it inherited (its copy of the channel end is its own now). */
  afterFork(i: number): { listenSockets: InheritedSocket[]; socketChannelFd: number } {
    this.channels[i]?.releaseChildEnd();
    return { listenSockets: this.inherited[i] ?? [], socketChannelFd: SOCKET_CHANNEL_CHILD_FD };
  }

  /** Worker `i` exited: its channel goes. */
  exited(i: number): void {
    this.channels[i]?.close();
    this.channels[i] = undefined;
  }

  /** A socket opened after the workers forked reaches each running worker, its descriptors for that worker (a later fork inherits them). */
  send(socket: ListenSocket): void {
    this.channels.forEach((channel, i) => {
      const fds = this.sockets.ofWorker(socket, i);
      for (const fd of fds) channel?.send(socket.id, fd, fds.length);
    });
  }

  closeAll(): void {
    for (let i = 0; i < this.channels.length; i++) this.exited(i);
  }
}
