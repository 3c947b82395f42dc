import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from './paths.js';

/**
 * Where a place in a role's bundle (dist/roles/<role>.cjs, made by scripts/bundle.mjs) came from:
 * its TypeScript source and line, from the origin table the build writes beside the bundle (its
 * format is described there). Log lines (%#) and CPU and heap profiles name the sources, as they
 * do when the sources run under tsx. Code of a dependency maps to nothing.
 *
 * A table is read when a lookup needs it and held only weakly: a process looks places up while it
 * starts (its log lines) and rarely after, and the worker's table is ~0.12 MB that an idle process
 * would otherwise keep. Callers that look the same places up again cache their answers.
 */

const ORIGINS_MAGIC = 0x3147524f;
const ORIGIN_LINE_BITS = 20;
const HEADER_WORDS = 4;

class OriginTable {
  private readonly lineStarts: Uint32Array;
  private readonly columns: Uint32Array;
  private readonly origins: Uint32Array;
  private readonly sources: string[];

  constructor(file: Buffer) {
    // Typed arrays need 4-byte alignment; a file read whole has its own buffer, so this seldom copies.
    const bytes = file.byteOffset % 4 === 0 ? file : Buffer.from(file);
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 4));
    const [magic, lineCount, entryCount, jsonLength] = words;
    if (magic !== ORIGINS_MAGIC || HEADER_WORDS + lineCount! + 1 + 2 * entryCount! > words.length) throw new Error('not an origin table');
    let at = HEADER_WORDS;
    this.lineStarts = words.subarray(at, (at += lineCount! + 1));
    this.columns = words.subarray(at, (at += entryCount!));
    this.origins = words.subarray(at, (at += entryCount!));
    this.sources = JSON.parse(bytes.toString('utf8', at * 4, at * 4 + jsonLength!)) as string[];
  }

  /** The origin of `line` (1-based) at `column` (0-based). */
  lookup(line: number, column: number): { source: string; line: number } | undefined {
    if (line < 1 || line >= this.lineStarts.length) return undefined;
    // The last entry that starts at or before the place: on its line, else the last one before it.
    let lo = this.lineStarts[line - 1]!;
    let hi = this.lineStarts[line]!;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.columns[mid]! <= column) lo = mid + 1;
      else hi = mid;
    }
    const origin = lo > 0 ? this.origins[lo - 1]! : 0;
    if (origin === 0) return undefined;
    return { source: this.sources[(origin >>> ORIGIN_LINE_BITS) - 1]!, line: origin & ((1 << ORIGIN_LINE_BITS) - 1) };
  }
}

const tables = new Map<string, WeakRef<OriginTable> | null>();

function tableOf(bundle: string): OriginTable | undefined {
  const held = tables.get(bundle);
  if (held === null) return undefined;
  let table = held?.deref();
  if (table === undefined) {
    try {
      table = new OriginTable(readFileSync(`${bundle}.origins`));
    } catch {
      tables.set(bundle, null);
      return undefined;
    }
    tables.set(bundle, new WeakRef(table));
  }
  return table;
}

/** True for a path (or file: URL) of a role's bundle. */
export function isBundle(file: string): boolean {
  return file.endsWith('.cjs') && file.includes('/dist/roles/');
}

/** The source and 1-based line that `line` (1-based) at `column` (0-based) of `bundle` came from. */
export function bundleOrigin(bundle: string, line: number, column: number): { source: string; line: number } | undefined {
  return tableOf(bundle.startsWith('file://') ? new URL(bundle).pathname : bundle)?.lookup(line, column);
}

interface CallFrame {
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface HeapNode {
  callFrame?: CallFrame;
  children?: HeapNode[];
}

/**
 * A CPU profile's nodes (`nodes`) or a sampling heap profile's tree (`head`), with the frames of
 * a bundle pointing at the sources they came from (DevTools and speedscope show those files).
 */
export function mapProfileToSources(profile: unknown): unknown {
  const mapFrame = (frame: CallFrame | undefined) => {
    if (!frame || !isBundle(frame.url)) return;
    const origin = bundleOrigin(frame.url, frame.lineNumber + 1, frame.columnNumber);
    if (!origin) return;
    frame.url = pathToFileURL(join(packageRoot, origin.source)).href;
    frame.lineNumber = origin.line - 1;
    frame.columnNumber = 0;
  };
  const p = profile as { nodes?: { callFrame?: CallFrame }[]; head?: HeapNode };
  for (const node of p.nodes ?? []) mapFrame(node.callFrame);
  const pending = p.head ? [p.head] : [];
  while (pending.length) {
    const node = pending.pop()!;
    mapFrame(node.callFrame);
    pending.push(...(node.children ?? []));
  }
  return profile;
}
