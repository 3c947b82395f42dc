import type { ChildProcess } from 'node:child_process';
import { SocketChannelParent } from '../shared/socket-channel.js';
import type { ListenSocket, ListenSockets } from './listen-sockets.js';

/**
 * The descriptors a worker gets, all on its socket channel (shared/socket-channel.ts): at fork
 * it inherits only its end of the channel (fd 4); at init the supervisor sends it the
 * circuit-breaker, token-bucket and heartbeat regions and its descriptors of every listening socket open
 * then (with reuse_port, its own), and afterwards each socket opened later. So a worker forked
 * before the configuration was loaded (supervisor/spares.ts) and one forked now are given the
 * same way. A replacement worker gets a new channel.
 */

const SOCKET_CHANNEL_CHILD_FD = 4;

/** A worker process forked with its channel, before it was given anything. */
export interface BareWorker {
  process: ChildProcess;
  channel: SocketChannelParent;
}

export class WorkerDescriptors {
  private readonly channels: (SocketChannelParent | undefined)[] = [];

  constructor(
    private readonly sockets: ListenSockets,
    /** The tree's shared regions, by the name each worker takes it by: circuit breakers, token buckets, heartbeats. */
    private readonly regions: Record<'breakers' | 'buckets' | 'heartbeats', number>,
  ) {}

  /** The descriptors for forking worker `i` (after stdin, stdout, stderr and IPC): its channel's end. */
  forFork(i: number): number[] {
    this.channels[i]?.close();
    return [(this.channels[i] = new SocketChannelParent()).childEnd];
  }

  /** Worker `i` is one forked earlier with its channel (its copy of the channel's end is its own already). */
  adopt(i: number, channel: SocketChannelParent): void {
    this.channels[i]?.close();
    this.channels[i] = channel;
  }

  /**
   * Worker `i` was forked (or adopted): its copy of the channel's end is its own, and the regions
   * and every open socket go to it. Returns where its init message says its channel is.
   */
  afterFork(i: number): { socketChannelFd: number } {
    const channel = this.channels[i]!;
    channel.releaseChildEnd();
    for (const [name, fd] of Object.entries(this.regions)) channel.sendRegion(name, fd);
    for (const socket of this.sockets.openSockets()) this.sendTo(channel, i, socket);
    return { socketChannelFd: SOCKET_CHANNEL_CHILD_FD };
  }

  /** Worker `i` exited: its channel goes. */
  exited(i: number): void {
    this.channels[i]?.close();
    this.channels[i] = undefined;
  }

  /** A socket opened after the workers started reaches each running worker, its descriptors for that worker. */
  send(socket: ListenSocket): void {
    this.channels.forEach((channel, i) => {
      if (channel) this.sendTo(channel, i, socket);
    });
  }

  private sendTo(channel: SocketChannelParent, i: number, socket: ListenSocket): void {
    const fds = this.sockets.ofWorker(socket, i);
    for (const fd of fds) channel.send(socket.id, fd, fds.length);
  }

  closeAll(): void {
    for (let i = 0; i < this.channels.length; i++) this.exited(i);
  }
}
