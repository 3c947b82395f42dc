import type { BootstrapHandOver } from '../../shared/config/bootstrap.js';
import { getLogger } from '../../shared/log/logger.js';
import type { HotRestartStatus } from '../../shared/ipc.js';
import { hotRestartVersion } from '../../shared/version.js';
import type { ListenerManager } from '../listener-manager.js';
import type { Options } from '../options.js';
import type { ProcessTree } from '../tree.js';
import { ChildLink } from './child-link.js';
import { establishIdentity, type HotRestartIdentity } from './identity.js';
import { ParentLink } from './parent-link.js';

/**
 * One epoch's part in hot restart: its identity (base id, sockets, region), its link to the
 * previous epoch (parent-link.ts: take over from it) and to the next (child-link.ts: hand over
 * to it), and the phase /hot_restart_status shows.
 */

const log = getLogger('main', import.meta.url);

type Phase = NonNullable<HotRestartStatus['phase']>;

const PREPARE_DELAY_MS = 100;

export class HotRestartEpoch {
  private tree: ProcessTree | undefined;
  private phase: Phase = 'initializing';
  /** This epoch as the child of the previous one. */
  readonly parent: ParentLink;
  /** This epoch as the parent of the next one. */
  private readonly child: ChildLink;

  private constructor(
    private readonly options: Options,
    readonly identity: HotRestartIdentity,
    child: ChildLink,
  ) {
    this.parent = new ParentLink(identity.channel, options.restartEpoch, options.parentShutdownTimeS, () => this.report());
    this.child = child;
  }

  status(): HotRestartStatus {
    return {
      enabled: true,
      baseId: this.identity.baseId,
      restartEpoch: this.options.restartEpoch,
      socketPath: this.options.socketPath,
      phase: this.phase,
      ...this.parent.status(),
    };
  }

  /** Tells the admin process (the supervisor forwards it, and replays it to a replacement). */
  private report(): void {
    this.tree?.reportHotRestart(this.status());
  }

  private setPhase(phase: Phase): void {
    this.phase = phase;
    this.report();
  }

  /** Binds this epoch's sockets and region (throws HotRestartError with Envoy's messages). */
  static establish(options: Options, startTimeMs: number): HotRestartEpoch {
    let epoch: HotRestartEpoch | undefined;
    const child = new ChildLink(
      () => epoch!.parent.terminate(),
      (phase) => epoch!.setPhase(phase),
    );
    const identity = establishIdentity({
      baseId: options.baseId,
      useDynamicBaseId: options.useDynamicBaseId,
      baseIdPath: options.baseIdPath,
      restartEpoch: options.restartEpoch,
      socketPath: options.socketPath,
      socketMode: options.socketMode,
      trustRoot: options.hotRestartTrustRoot,
      startTimeMs,
      onRequest: child.answer,
    });
    epoch = new HotRestartEpoch(options, identity, child);
    log.info(`initializing epoch ${options.restartEpoch} (base id=${identity.baseId}, hot restart version=${hotRestartVersion(false)})`);
    return epoch;
  }

  /** The tree this epoch runs: it answers the next epoch, and collects the parent's figures. */
  attach(tree: ProcessTree, sockets: ListenerManager, configuration: BootstrapHandOver): void {
    this.tree = tree;
    this.child.attach(tree, sockets, configuration);
    this.report();
    this.parent.collectInto(tree.statsRelay);
    void tree.live.then(() => {
      this.identity.region.endInitializing();
      this.identity.region.claimNewest();
      this.setPhase('live');
      this.parent.drainParent();
      // Soon after (the parent's drain order goes first), before the next restart may come.
      setTimeout(() => this.child.prepare(), PREPARE_DELAY_MS).unref();
    });
  }

  /**
   * This epoch stopping on a signal: a parent already draining goes too (as in Envoy); one not
   * yet told to drain keeps serving and gets its admin interface back.
   */
  stopping(): Promise<void> {
    return this.phase === 'initializing' ? Promise.resolve() : this.parent.terminate();
  }

  close(): void {
    this.parent.close();
    this.child.close();
    this.identity.channel.close();
    this.identity.region.releaseIfNewest();
  }
}
