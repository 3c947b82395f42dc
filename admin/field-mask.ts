import protobuf from 'protobufjs';
import { fullName, lookupTypeOrNull, type JsonObject } from '../shared/config/proto-json.js';
import { typeNameOfUrl } from '../shared/config/wkt.js';

/**
 * A protobuf FieldMask (comma-separated dotted paths) applied to proto JSON, as Envoy's
 * /config_dump applies it: every path must name fields of the message's type, only its last
 * segment may be a repeated field, and — when `throughAny` — a segment naming an Any continues
 * inside the packed message (which keeps its @type).
 */

export class FieldMaskError extends Error {}

type PathTree = Map<string, PathTree>;

function pathTree(paths: string[]): PathTree {
  const root: PathTree = new Map();
  for (const path of paths) {
    let node = root;
    for (const segment of path.split('.')) {
      let next = node.get(segment);
      if (!next) node.set(segment, (next = new Map()));
      node = next;
    }
  }
  return root;
}

/** FieldMask paths from the `mask` query value (canonical JSON form: lowerCamel or snake_case). */
export function parseMask(mask: string): string[] {
  return mask.split(',').map((p) => p.trim()).filter(Boolean).map((p) => p.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
}

/** Keeps only the masked fields of `message` (of `type`); throws FieldMaskError when a path does not resolve. */
export function applyMask(type: protobuf.Type, message: JsonObject, paths: string[], throughAny: boolean): JsonObject {
  return pick(type, message, pathTree(paths), throughAny);
}

function pick(type: protobuf.Type, message: JsonObject, tree: PathTree, throughAny: boolean): JsonObject {
  const out: JsonObject = {};
  if (fullName(type) === 'google.protobuf.Any') {
    if (!throughAny) throw new FieldMaskError('cannot reach inside an Any');
    const inner = lookupTypeOrNull(type.root as protobuf.Root, typeNameOfUrl(String(message['@type'] ?? '')));
    if (!inner) throw new FieldMaskError('unknown packed type');
    const { '@type': typeUrl, ...fields } = message;
    return { '@type': typeUrl, ...pick(inner, fields, tree, throughAny) };
  }
  for (const [segment, rest] of tree) {
    const field = type.fields[segment];
    if (!field) throw new FieldMaskError(`no field ${segment}`);
    const value = message[segment];
    if (rest.size === 0) {
      if (value !== undefined) out[segment] = value;
      continue;
    }
    if (field.repeated || field.map || !(field.resolvedType instanceof protobuf.Type)) throw new FieldMaskError(`cannot descend through ${segment}`);
    const sub = value === undefined ? {} : pick(field.resolvedType, value as JsonObject, rest, throughAny);
    if (value !== undefined) out[segment] = sub;
  }
  return out;
}

/** Envoy's error text: the mask's protobuf debug form, one `paths: "…"` line per path. */
export function maskDebugText(paths: string[]): string {
  return paths.map((p) => `paths: "${p}"\n`).join('');
}
