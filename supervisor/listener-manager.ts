import { list, obj } from '../shared/config/access.js';
import { readDataSource } from '../shared/config/data-source.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { filterChainsOf, rdsUsersOf, socketIdsOf, type ListenerResource, type TrafficDirection, type UpdateFailure } from '../shared/config/resources.js';
import { isUdpListener, sharedAddressKey } from '../shared/config/semantic/listeners.js';
import { checkResource, LISTENER_TYPE } from '../shared/config/xds-resource.js';
import { sameResource } from '../shared/config/resource-hash.js';
import type { DrainOrder } from '../shared/ipc.js';
import { getLogger } from '../shared/log/logger.js';
import { stats } from '../shared/stats/process.js';
import { listenerChainKey, loadListenerTls, type LoadedTls } from '../shared/extensions/transport-sockets/tls/context.js';
import { StaticSecrets, type SecretLookup } from '../shared/extensions/transport-sockets/tls/secrets.js';
import { countSdsBuilds } from './tls-secrets.js';
import type { DynamicFieldPolicy } from './cluster-manager.js';
import type { BucketRegion } from './ratelimit/bucket-region.js';
import { ListenerDrains, withoutChains } from './listener-drains.js';
import { ListenerSlots } from './listener-slots.js';
import { ListenerBindError, socketHandOverAddress, type ListenSocket, type ListenSockets } from './listen-sockets.js';
import { openAccessLogs, socketsFor, type Released } from './listener-socket-choice.js';
import { luaLoadErrors } from '../shared/lua/load-check.js';
import { errorText, type ConfigError } from '../shared/config/config-error.js';
import type { Listener } from '../shared/config/envoy-types.js';

/**
 * The tree's listeners, owned by the supervisor as Envoy's main thread owns them: each with its
 * configuration, source, version and listening socket. The bootstrap is the first source, the
 * listener discovery service the other. A change that touches only filter chains is made in
 * place (unchanged chains keep their connections, the others drain); any other change replaces
 * the listener, on the same socket when the address stays, and the old one drains; a removed
 * listener stops accepting and drains. Draining lasts --drain-time-s, then what is left closes.
 */

const log = getLogger('config', import.meta.url);

/** A refused listener update, with the configuration that was refused (/config_dump's error_state). */
export interface ListenerFailure extends UpdateFailure {
  failedConfiguration: JsonObject;
}

/** One listener change, as the tree applies it. */
export type ListenerChange =
  /** New, or replacing the listener of that name (whose connections drain, all or on changed chains only). */
  | { kind: 'upsert'; resource: ListenerResource; inPlace: boolean; drain: DrainOrder }
  /** Stops accepting; its connections drain. */
  | { kind: 'remove'; name: string; drain: DrainOrder };

export interface ListenerChanges {
  /** In order: removals first, as Envoy's LDS does, then additions and modifications. */
  changes: ListenerChange[];
  /** Sockets no listener uses any more: closed here; workers close theirs. */
  closedSockets: number[];
  /** Sockets opened for this update (workers that are already running are sent them). */
  openedSockets: ListenSocket[];
  rejected: string[];
  /** Listeners that started warming (waiting for their route tables) with this update. */
  warming: string[];
}

function directionOf(config: JsonObject): TrafficDirection {
  return (config.traffic_direction ?? 'UNSPECIFIED') as TrafficDirection;
}

/** What two epochs both call the `index`-th static listener when it has no name. */
function unnamedHandOverKey(index: number): string {
  return `static_resources.listeners[${index}]`;
}

export class ListenerManager {
  private readonly byName = new Map<string, ListenerResource>();
  /** New versions waiting for their route tables before they serve (Envoy's warming listeners). */
  private readonly warmingByName = new Map<string, ListenerResource>();
  /** Whether the route configuration of that name is here (set by the tree: the route manager knows). */
  hasRoutes: (name: string) => boolean = () => true;
  /** The secrets listeners' TLS contexts name (set by the tree: the bootstrap's, and SDS's). */
  secrets: SecretLookup = new StaticSecrets({}, []);
  /** The SDS secrets (names) of these contexts that have neither come nor timed out (set by the tree). */
  secretsPending: (tls: ListenerResource['tls']) => string[] = () => [];
  /** What drains after changes, for the drain time. */
  readonly drains: ListenerDrains;
  /** Directions stopped by /drain_listeners: later additions and modifications there are not made. */
  private readonly stoppedDirections = new Set<DrainOrder['direction']>();
  private readonly failures = new Map<string, ListenerFailure>();
  private readonly warnedUnknown = new Set<string>();
  /** The version of the last LDS update accepted whole (/config_dump's version_info). */
  ldsVersionInfo: string | undefined;
  /** Set once the workers serve: before that a replaced listener has no connections to drain. */
  private workersStarted = false;
  private readonly added = stats.counter('listener_manager.listener_added');
  private readonly modified = stats.counter('listener_manager.listener_modified');
  private readonly removed = stats.counter('listener_manager.listener_removed');
  private readonly stoppedCount = stats.counter('listener_manager.listener_stopped');
  private readonly inPlaceUpdated = stats.counter('listener_manager.listener_in_place_updated');
  private readonly dynamicUnknownFields = stats.counter('server.dynamic_unknown_fields');
  // Envoy's NeverImport gauges: a hot-restart parent's figures are not added to the child's.
  private readonly active = stats.gauge('listener_manager.total_listeners_active', 'local');
  private readonly warming = stats.gauge('listener_manager.total_listeners_warming', 'local');
  private readonly workersStartedGauge = stats.gauge('listener_manager.workers_started', 'local');

  /** The names minted for static listeners that have none, by their hand-over key (unnamedHandOverKey). */
  private readonly unnamedStatic = new Map<string, string>();
  /** The listeners' connection-count and token-bucket slots. */
  private readonly slots: ListenerSlots;

  constructor(
    private readonly sockets: ListenSockets,
    private readonly drainOrder: () => DrainOrder,
    buckets: Pick<BucketRegion, 'allocate' | 'release'>,
  ) {
    this.slots = new ListenerSlots(buckets);
    this.drains = new ListenerDrains(() => drainOrder().drainTimeMs);
    this.workersStartedGauge.set(0);
    this.refreshGauges();
  }

  /** Binds (or inherits) every bootstrap listener's socket; on a failure closes what it opened and throws, naming the listener. */
  async addStatic(bootstrap: JsonObject, listenerNames: readonly string[], tls: LoadedTls, nowMs = Date.now()): Promise<void> {
    try {
      for (const [i, config] of list(obj(bootstrap.static_resources).listeners).entries()) {
        const name = listenerNames[i]!;
        // An unnamed listener's UUID is new in every epoch: the next epoch asks for its socket (a
        // port-0 one is found by this, not by its address) by its place in static_resources.
        const handOverKey = name === config.name ? name : unnamedHandOverKey(i);
        if (handOverKey !== name) this.unnamedStatic.set(handOverKey, name);
        const socket = await this.sockets.bind(config, name, handOverKey);
        const additional = await this.sockets.bindAdditional(config, name, handOverKey);
        const chainTls: ListenerResource['tls'] = {};
        for (const [key] of filterChainsOf(config)) {
          const context = tls.listeners[listenerChainKey(name, key)];
          if (context) chainTls[key] = context;
        }
        const bucketSlots = this.slots.bucketSlotsFor(config, name, undefined, socket.id);
        this.byName.set(name, { name, config, addedViaApi: false, lastUpdatedMs: nowMs, socketId: socket.id, address: socket.address, ...(additional ? { additional } : {}), trafficDirection: directionOf(config), tls: chainTls, stopped: false, bucketSlots, connectionSlot: this.slots.connectionSlotFor(name) });
        this.added.inc();
      }
    } catch (err) {
      this.sockets.closeAll();
      throw err;
    }
    this.refreshGauges();
  }

  /** Every listener that serves or was stopped by /drain_listeners, in the order they were added. */
  get listeners(): ListenerResource[] {
    return [...this.byName.values()];
  }

  get updateFailures(): ListenerFailure[] {
    return [...this.failures.values()];
  }

  /**
   * An LDS update: the full set of dynamic listeners (state of the world). Each resource is
   * checked alone (a refused one keeps its earlier version); removals come first, so that an
   * address a removed listener had can be taken in the same update.
   */
  async applyLds(versionInfo: string, resources: JsonObject[], policy: DynamicFieldPolicy, clusterNames: Set<string>, nowMs = Date.now()): Promise<ListenerChanges> {
    const out: ListenerChanges = { changes: [], closedSockets: [], openedSockets: [], rejected: [], warming: [] };
    const valid: JsonObject[] = [];
    const named = new Set<string>();
    const refuse = (name: string | undefined, label: string, errors: readonly (ConfigError | string)[], config?: JsonObject) => {
      out.rejected.push(`listener '${label}': ${errorText(errors)}`);
      if (name !== undefined) this.failures.set(name, { name, lastUpdateAttemptMs: nowMs, details: errorText(errors), versionInfo, failedConfiguration: config ?? {} });
    };
    for (const [i, any] of resources.entries()) {
      const checked = checkResource(LISTENER_TYPE, any, policy.unknownFields, policy.disabledExtensions, clusterNames);
      const label = checked.name ?? `resources[${i}]`;
      this.countUnknown(checked.unknownFields, label);
      if (checked.name !== undefined && named.has(checked.name)) {
        out.rejected.push(`listener '${label}': duplicate in the same update`);
        continue;
      }
      if (checked.name !== undefined) named.add(checked.name);
      if (!checked.message) {
        refuse(checked.name, label, checked.errors, any);
        continue;
      }
      const current = this.byName.get(label);
      if (current && !current.addedViaApi) {
        refuse(label, label, ['a listener of static_resources cannot be changed by the listener discovery service'], checked.message);
        continue;
      }
      valid.push(checked.message);
    }
    for (const name of this.failures.keys()) if (!named.has(name)) this.failures.delete(name);

    // Sockets the removed or readdressed listeners leave: one of this update's listeners may take one.
    const released: Released[] = [];
    for (const [name, l] of this.byName) {
      if (!l.addedViaApi || named.has(name)) continue;
      this.byName.delete(name);
      this.removed.inc();
      if (!l.stopped) {
        this.release(l, released);
        this.drains.listener(l, nowMs);
      }
      out.changes.push({ kind: 'remove', name, drain: this.drainOrder() });
      log.info(`lds: listener '${name}' removed; draining its connections`);
    }
    for (const name of [...this.warmingByName.keys()]) if (!named.has(name)) this.dropWarming(name, released);
    for (const config of valid) {
      const name = String(config.name);
      const current = this.byName.get(name);
      const warming = this.warmingByName.get(name);
      const same = (r: ListenerResource | undefined) => r !== undefined && sameResource(r.config, config);
      if (same(warming)) continue;
      if (same(current)) {
        // Back to the version that serves: the one warming is dropped.
        if (warming) {
          this.dropWarming(name, released);
          this.modified.inc();
        }
        continue;
      }
      const direction = directionOf(config);
      if (this.stoppedDirections.has('all') || (direction === 'INBOUND' && this.stoppedDirections.has('inbound'))) {
        // As Envoy: not an error, but not made (the listeners of that direction were stopped).
        log.warn(`lds: listener '${name}' not ${current ? 'modified' : 'added'}: ${direction === 'INBOUND' ? 'inbound ' : ''}listeners were stopped by /drain_listeners`);
        continue;
      }
      const errors: (ConfigError | string)[] = [...this.checkAddress(config, name), ...openAccessLogs(config)];
      const tlsErrors: ConfigError[] = [];
      const chainTls = loadListenerTls(config, 'listener', readDataSource, tlsErrors, this.secrets);
      errors.push(...tlsErrors);
      // A Lua script that does not load refuses the listener (Envoy's script load error), as at start.
      errors.push(...(await luaLoadErrors(config, 'listener')));
      if (errors.length) {
        refuse(name, name, errors, config);
        continue;
      }
      let socket: ListenSocket;
      let additional: ListenerResource['additional'];
      try {
        ({ socket, additional } = await socketsFor(this.sockets, config, name, [current, warming], released, out.openedSockets));
      } catch (err) {
        if (!(err instanceof ListenerBindError)) throw err;
        refuse(name, name, [err.message], config);
        continue;
      }
      let bucketSlots: ListenerResource['bucketSlots'];
      let connectionSlot: number;
      try {
        connectionSlot = this.slots.connectionSlotFor(name);
        bucketSlots = this.slots.bucketSlotsFor(config, name, current, socket.id);
      } catch (err) {
        refuse(name, name, [(err as Error).message], config);
        continue;
      }
      this.failures.delete(name);
      const resource: ListenerResource = { name, config, addedViaApi: true, versionInfo, lastUpdatedMs: nowMs, socketId: socket.id, address: socket.address, ...(additional ? { additional } : {}), trafficDirection: direction, tls: chainTls, stopped: false, bucketSlots, connectionSlot };
      (current || warming ? this.modified : this.added).inc();
      if (warming) this.dropWarming(name, released, socketIdsOf(resource));
      countSdsBuilds(resource);
      // Once the workers serve, a listener whose route tables or secrets have not come yet warms until they do.
      const missing = this.workersStarted ? this.waitingFor(resource) : [];
      if (missing.length) {
        this.warmingByName.set(name, resource);
        out.warming.push(name);
        log.info(`lds: listener '${name}' warming on ${resource.address} until ${missing.join(', ')} arrive`);
        continue;
      }
      this.activate(resource, current, released, out, nowMs);
    }
    this.closeReleased(released, out);
    this.slots.releaseUnused([...this.byName.values(), ...this.warmingByName.values()]);
    if (out.rejected.length === 0) this.ldsVersionInfo = versionInfo;
    this.refreshGauges();
    return out;
  }

  /** The workers serve from now on (`listener_manager.workers_started`). */
  markWorkersStarted(): void {
    this.workersStarted = true;
    this.workersStartedGauge.set(1);
  }

  /** The names of warming listeners. */
  get warmingNames(): string[] {
    return [...this.warmingByName.keys()];
  }

  get warmingNow(): ListenerResource[] {
    return [...this.warmingByName.values()];
  }

  /** The route configurations (by name) a listener's connection managers take by RDS and that are not here yet. */
  missingRoutes(config: Listener): string[] {
    return rdsUsersOf([config])
      .map((u) => u.name)
      .filter((n) => !this.hasRoutes(n));
  }

  /** What a listener waits for before it serves: its route configurations by RDS, its secrets by SDS. */
  waitingFor(resource: ListenerResource): string[] {
    return [...this.missingRoutes(resource.config).map((n) => `route configuration '${n}'`), ...this.secretsPending(resource.tls).map((n) => `secret '${n}'`)];
  }

  /** A warming listener is warm (its route tables came, or the wait ran out): it takes over from the version that served. */
  promote(name: string, nowMs = Date.now()): ListenerChanges {
    const out: ListenerChanges = { changes: [], closedSockets: [], openedSockets: [], rejected: [], warming: [] };
    const resource = this.warmingByName.get(name);
    if (!resource) return out;
    this.warmingByName.delete(name);
    const released: Released[] = [];
    this.activate(resource, this.byName.get(name), released, out, nowMs);
    this.closeReleased(released, out);
    this.slots.releaseUnused([...this.byName.values(), ...this.warmingByName.values()]);
    this.refreshGauges();
    return out;
  }

  /** The breaker region's slots that count listeners' connections (a worker that is gone has its counts there cleared). */
  connectionCountSlots(): Iterable<number> {
    return this.slots.connectionCountSlots();
  }

  /** `resource` serves from now on; the version it replaces drains (only its changed filter chains, in place). */
  private activate(resource: ListenerResource, current: ListenerResource | undefined, released: Released[], out: ListenerChanges, nowMs: number): void {
    const inPlace = current !== undefined && !current.stopped && socketIdsOf(current).join() === socketIdsOf(resource).join() && withoutChains(current.config) === withoutChains(resource.config);
    if (current && !current.stopped && this.workersStarted) {
      if (inPlace) this.drains.chains(current, resource.config);
      else this.drains.listener(current, nowMs);
    }
    this.byName.set(resource.name, resource);
    if (current && !inPlace) this.release(current, released);
    if (inPlace) this.inPlaceUpdated.inc();
    out.changes.push({ kind: 'upsert', resource, inPlace, drain: this.drainOrder() });
    log.info(`lds: listener '${resource.name}' ${current ? (inPlace ? 'updated in place (filter chains)' : 'modified') : 'added'} on ${resource.address}`);
  }

  /** A warming version goes; its sockets too, but those in `keep` (the version replacing it took them) or another listener uses. */
  private dropWarming(name: string, released: Released[], keep: readonly number[] = []): void {
    const warming = this.warmingByName.get(name);
    if (!warming) return;
    this.warmingByName.delete(name);
    this.release(warming, released, keep);
  }

  /** The sockets that `resource` had (but `keep`) are left for this update's other listeners, if no listener uses them. */
  private release(resource: ListenerResource, released: Released[], keep: readonly number[] = []): void {
    for (const id of socketIdsOf(resource)) {
      const socket = keep.includes(id) ? undefined : this.sockets.open.get(id);
      if (socket && !this.inUse(socket.id) && !released.some((r) => r.socket === socket)) released.push({ socket, by: resource.name });
    }
  }

  private inUse(socketId: number): boolean {
    return [...this.byName.values()].some((l) => socketIdsOf(l).includes(socketId) && !l.stopped) || [...this.warmingByName.values()].some((l) => socketIdsOf(l).includes(socketId));
  }

  /** A released socket that no listener took is closed. */
  private closeReleased(released: Released[], out: ListenerChanges): void {
    for (const { socket } of released) {
      if (this.inUse(socket.id)) continue;
      this.sockets.close(socket.id);
      out.closedSockets.push(socket.id);
    }
  }

  /** A listener may not take an address (its own or an additional one) another listener (of another name) serves. */
  private checkAddress(config: JsonObject, name: string): string[] {
    const keys = addressKeysOf(config);
    if (keys.length === 0) return [];
    // Another listener's addresses as configured, or as bound (one configured on port 0 has a real port too).
    const taken = (l: ListenerResource) => [...addressKeysOf(l.config), obj(l.config.address).pipe ? `unix:${l.address}` : isUdpListener(l.config) ? `udp:${l.address}` : l.address, ...(l.additional?.addresses ?? [])];
    const others = [...[...this.byName.values()].filter((l) => !l.stopped), ...this.warmingByName.values()];
    for (const key of keys) {
      const other = others.find((l) => l.name !== name && taken(l).includes(key));
      if (other) return [`error adding listener '${name}': address '${key}' is already used by listener '${other.name}'`];
    }
    return [];
  }

  /**
   * /drain_listeners (and a hot-restart parent's drain): the listeners of `direction` stop, their
   * sockets close here; later LDS additions and modifications in that direction are not made.
   * Returns the names stopped now.
   */
  stop(direction: DrainOrder['direction']): string[] {
    this.stoppedDirections.add(direction);
    const stopped: string[] = [];
    for (const l of this.byName.values()) {
      if (l.stopped || (direction === 'inbound' && l.trafficDirection !== 'INBOUND')) continue;
      l.stopped = true;
      stopped.push(l.name);
    }
    // A version still warming in that direction never serves.
    for (const [name, l] of this.warmingByName) if (direction === 'all' || l.trafficDirection === 'INBOUND') this.warmingByName.delete(name);
    for (const id of [...this.sockets.open.keys()]) if (!this.inUse(id)) this.sockets.close(id);
    this.stoppedCount.inc(stopped.length);
    this.refreshGauges();
    return stopped;
  }

  /**
   * The socket to hand to the next epoch for `address` (a request by hand-over address): the
   * socket bound there, or, for a port-0 request, the one of the same-named listener configured on port 0.
   */
  forHandOver(address: string, listenerName: string): ListenSocket | undefined {
    const open = [...this.sockets.open.values()];
    const byAddress = open.find((s) => socketHandOverAddress(s, true) === address);
    if (byAddress) return byAddress;
    // An additional address's key is the listener's, then its place (addStatic).
    const [key, additional] = listenerName.split('\u0000additional');
    const named = this.byName.get(this.unnamedStatic.get(key!) ?? key!);
    const id = additional === undefined ? named?.socketId : named?.additional?.socketIds[Number(additional)];
    const socket = named && !named.stopped && id !== undefined ? this.sockets.open.get(id) : undefined;
    return socket && socketHandOverAddress(socket) === address ? socket : undefined;
  }

  private countUnknown(fields: string[], label: string): void {
    for (const field of fields) {
      this.dynamicUnknownFields.inc();
      if (!this.warnedUnknown.has(field)) log.warn(`lds: unknown field ${field} in listener '${label}' ignored`);
      this.warnedUnknown.add(field);
    }
  }

  private refreshGauges(): void {
    this.active.set([...this.byName.values()].filter((l) => !l.stopped).length);
    this.warming.set(this.warmingByName.size);
  }
}

/** The addresses a listener takes for itself (its own, then its additional ones), as sharedAddressKey writes them. */
function addressKeysOf(config: Listener): string[] {
  const all = [config.address, ...list(config.additional_addresses).map((a) => obj(a).address)];
  return all.map((address) => sharedAddressKey({ ...config, address } as Listener)).filter((k): k is string => k !== undefined);
}
