import { lstatSync, readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import { list, obj } from '../shared/config/access.js';
import { join } from 'node:path';
import { load as loadYaml } from 'js-yaml';
import type { JsonObject } from '../shared/config/proto-json.js';
import { getLogger } from '../shared/log/logger.js';
import type { RuntimeSnapshot } from '../shared/runtime.js';
import { stats } from '../shared/stats/process.js';
import { presentAtZero } from '../shared/stats/always-present.js';

/**
 * The runtime layers of the bootstrap's `layered_runtime`, held by the supervisor: static layers
 * (a Struct, flattened to dotted keys), disk layers (one file per key under
 * `symlink_root/subdirectory`, and `/<service cluster>` with append_service_cluster; re-read when
 * the symlink root changes, as operators swap it atomically), and the admin layer (POST
 * /runtime_modify). Without a `layered_runtime` there are no layers, as in Envoy, and
 * /runtime_modify answers 503; a `layered_runtime` with no layers gets an admin layer.
 */

const log = getLogger('runtime', import.meta.url);

type Layer =
  | { kind: 'static'; name: string; values: Map<string, string> }
  | { kind: 'disk'; name: string; root: string; subdirectory: string; values: Map<string, string> }
  | { kind: 'admin'; name: string; values: Map<string, string> };

export class RuntimeModifyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function flattenStruct(value: unknown, prefix: string, out: Map<string, string>): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flattenStruct(v, prefix ? `${prefix}.${k}` : k, out);
    return;
  }
  out.set(prefix, typeof value === 'string' ? value : JSON.stringify(value));
}

/**
 * Reads a disk layer's tree into `out`; returns the errors met (a directory or file that exists
 * but cannot be read). A layer that is absent, or a file that vanished between readdir and read
 * (an operator swapping the tree), is not an error: the next reload sees the new tree.
 */
function readDiskLayer(dir: string, prefix: string, out: Map<string, string>): string[] {
  const errors: string[] = [];
  const failed = (path: string, err: unknown) => {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') errors.push(`${path}: ${(err as Error).message}`);
  };
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch (err) {
    failed(dir, err);
    return errors;
  }
  for (const name of entries) {
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    const key = prefix ? `${prefix}.${name}` : name;
    try {
      if (statSync(path).isDirectory()) errors.push(...readDiskLayer(path, key, out));
      else out.set(key, readFileSync(path, 'utf8').trim());
    } catch (err) {
      failed(path, err);
    }
  }
  return errors;
}

/** What tells one version of a path from another: its inode, change and modification times (or that it is missing). */
function statIdentity(stat: () => Stats): string {
  try {
    const s = stat();
    return `${s.dev}:${s.ino}:${s.ctimeMs}:${s.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

export class RuntimeLayers {
  private readonly layers: Layer[] = [];
  private readonly keysGauge = stats.gauge('runtime.num_keys', 'local');
  private readonly layersGauge = stats.gauge('runtime.num_layers', 'local');
  private readonly overridesGauge = stats.gauge('runtime.admin_overrides_active', 'local');
  private readonly loadSuccess = stats.counter('runtime.load_success');
  private readonly loadError = stats.counter('runtime.load_error');
  private readonly watched: string[] = [];
  private poll: NodeJS.Timeout | undefined;

  constructor(
    bootstrap: JsonObject,
    serviceCluster: string,
    private readonly onChange: () => void,
  ) {
    presentAtZero('runtime', 'runtime.');
    if (bootstrap.layered_runtime !== undefined) {
      const configured = list(obj(bootstrap.layered_runtime).layers);
      for (const l of configured) {
        const name = String(l.name);
        if (l.static_layer !== undefined) {
          const values = new Map<string, string>();
          flattenStruct(l.static_layer, '', values);
          this.layers.push({ kind: 'static', name, values });
        } else if (l.disk_layer !== undefined) {
          const d = obj(l.disk_layer);
          const root = String(d.symlink_root ?? '');
          const sub = String(d.subdirectory ?? '');
          const subdirectory = d.append_service_cluster === true ? join(sub, serviceCluster) : sub;
          this.layers.push({ kind: 'disk', name, root, subdirectory, values: new Map() });
        } else {
          this.layers.push({ kind: 'admin', name, values: new Map() });
        }
      }
      if (configured.length === 0) this.layers.push({ kind: 'admin', name: 'admin', values: new Map() });
    }
    this.reloadDisk();
    for (const layer of this.layers) if (layer.kind === 'disk' && !this.watched.includes(layer.root)) this.watched.push(layer.root);
    if (this.watched.length) this.watchRoots();
    this.updateGauges();
  }

  /** Reloads the disk layers: a load with an unreadable file or directory is a load error (runtime.load_error), else a success. */
  private reloadDisk(): void {
    const errors: string[] = [];
    for (const layer of this.layers) {
      if (layer.kind !== 'disk') continue;
      const values = new Map<string, string>();
      errors.push(...readDiskLayer(join(layer.root, layer.subdirectory), '', values));
      layer.values = values;
      log.debug(`runtime: disk layer '${layer.name}' loaded ${values.size} key(s)`);
    }
    if (errors.length === 0) {
      this.loadSuccess.inc();
      return;
    }
    this.loadError.inc();
    log.warn(`runtime: ${errors.length} unreadable entr${errors.length === 1 ? 'y' : 'ies'} in the disk layers (${errors.slice(0, 3).join('; ')}); the readable keys are loaded`);
  }

  /** POST /runtime_modify: set (or, with an empty value, delete) admin overrides. */
  modify(overrides: [key: string, value: string][]): void {
    const admin = this.layers.find((l) => l.kind === 'admin');
    if (!admin) throw new RuntimeModifyError(503, 'No admin layer specified');
    for (const [, value] of overrides) {
      if (value === '') continue;
      try {
        loadYaml(value);
      } catch (err) {
        throw new RuntimeModifyError(503, (err as Error).message);
      }
    }
    for (const [key, value] of overrides) {
      if (value === '') admin.values.delete(key);
      else admin.values.set(key, value);
    }
    this.updateGauges();
    this.onChange();
  }

  snapshot(): RuntimeSnapshot {
    const keys = new Set<string>();
    for (const l of this.layers) for (const k of l.values.keys()) keys.add(k);
    const entries: Record<string, string[]> = {};
    for (const key of [...keys].sort()) entries[key] = this.layers.map((l) => l.values.get(key) ?? '');
    return { layers: this.layers.map((l) => l.name), entries };
  }

  private updateGauges(): void {
    const keys = new Set<string>();
    for (const l of this.layers) for (const k of l.values.keys()) keys.add(k);
    this.keysGauge.set(keys.size);
    this.layersGauge.set(this.layers.length);
    this.overridesGauge.set(this.layers.some((l) => l.kind === 'admin' && l.values.size > 0) ? 1 : 0);
  }

  /**
   * Operators swap a symlink root atomically (`ln -s v2 new && mv -Tf new current`), often back
   * to a directory seen before, or to the same one after changing what is under it (Envoy's
   * fault-injection sandbox does both): every swap is a new link, so the link itself is watched
   * (lstat), with the directory it leads to (stat), once a second. Any change reloads every disk
   * layer, as Envoy reloads on each move of a root.
   */
  private watchRoots(): void {
    const identity = (root: string) => `${statIdentity(() => lstatSync(root))}/${statIdentity(() => statSync(root))}`;
    const seen = new Map(this.watched.map((root) => [root, identity(root)]));
    this.poll = setInterval(() => {
      let changed = false;
      for (const root of this.watched) {
        const now = identity(root);
        if (now !== seen.get(root)) changed = true;
        seen.set(root, now);
      }
      if (!changed) return;
      this.reloadDisk();
      this.onChange();
    }, 1000);
    this.poll.unref();
  }

  close(): void {
    clearInterval(this.poll);
  }
}
