import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from './paths.js';

/**
 * Where a line of a role's bundle (dist/roles/<role>.cjs, made by scripts/bundle.mjs) came from:
 * its TypeScript source and line, from the table the build writes beside the bundle. Log lines
 * (%#) and CPU and heap profiles name the sources, as they do when the sources run under tsx.
 * A line of a dependency maps to nothing.
 */

interface LineTable {
  /** Sources, relative to the package root. */
  sources: string[];
  /** Per bundle line (1-based): [source index + 1, source line], 0s for lines of no source of ours. */
  lines: Uint32Array;
}

const tables = new Map<string, LineTable | null>();

function tableOf(bundle: string): LineTable | null {
  let table = tables.get(bundle);
  if (table === undefined) {
    try {
      const data = JSON.parse(readFileSync(`${bundle}.lines.json`, 'utf8')) as { sources: string[]; lines: string };
      const bytes = Buffer.from(data.lines, 'base64');
      table = { sources: data.sources, lines: new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) };
    } catch {
      table = null;
    }
    tables.set(bundle, table);
  }
  return table;
}

/** True for a path (or file: URL) of a role's bundle. */
export function isBundle(file: string): boolean {
  return file.endsWith('.cjs') && file.includes('/dist/roles/');
}

/** The source and 1-based line that `line` (1-based) of `bundle` came from. */
export function bundleOrigin(bundle: string, line: number): { source: string; line: number } | undefined {
  const table = tableOf(bundle.startsWith('file://') ? new URL(bundle).pathname : bundle);
  const index = table?.lines[line * 2];
  if (!table || !index) return undefined;
  return { source: table.sources[index - 1]!, line: table.lines[line * 2 + 1]! };
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
    const origin = bundleOrigin(frame.url, frame.lineNumber + 1);
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
