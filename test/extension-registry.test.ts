import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { envoySchema } from '../shared/config/schema.js';
import { lookupTypeOrNull } from '../shared/config/proto-json.js';
import { isHttpFilter } from '../shared/extensions/descriptor.js';
import { EXTENSIONS, extensionByName, extensionByTypeName, httpFilterByTypeName } from '../shared/extensions/registry.js';

/**
 * The extension registry: every folder under shared/extensions/ with a descriptor is registered
 * (its one line in its category's index.ts), and every descriptor says what Envoy's API has: its types exist,
 * the fields it lists exist, its names are found.
 */

const root = fileURLToPath(new URL('..', import.meta.url));

function descriptorFolders(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    if (!e.isDirectory()) return [];
    const sub = join(dir, e.name);
    return existsSync(join(root, sub, 'descriptor.ts')) ? [sub] : descriptorFolders(sub);
  });
}

describe('the extension registry', () => {
  it("registers every extension folder, each with one line in its category's index.ts", () => {
    const folders = descriptorFolders('shared/extensions');
    assert.ok(folders.length >= 16, `only ${folders.length} extension folders found`);
    for (const folder of folders) {
      const index = readFileSync(join(root, dirname(folder), 'index.ts'), 'utf8');
      const line = `from './${basename(folder)}/descriptor.js';`;
      assert.equal(index.split('\n').filter((l) => l.endsWith(line)).length, 1, `${folder} is not registered in ${dirname(folder)}/index.ts`);
    }
  });

  it("names types of Envoy's API, and fields those types have", () => {
    const schema = envoySchema();
    for (const e of EXTENSIONS) {
      for (const type of [e.typeName, ...(e.perRouteTypeName ? [e.perRouteTypeName] : [])]) assert.ok(lookupTypeOrNull(schema, type), `${e.name}: no message ${type}`);
      for (const [message, fields] of Object.entries(e.fields ?? {})) {
        const type = lookupTypeOrNull(schema, message);
        assert.ok(type, `${e.name}: no message ${message}`);
        for (const f of fields) assert.ok(type.fields[f], `${e.name}: ${message} has no field ${f}`);
      }
      for (const key of Object.keys(e.refusalReasons ?? {})) {
        const dot = key.lastIndexOf('.');
        assert.ok(lookupTypeOrNull(schema, key.slice(0, dot))?.fields[key.slice(dot + 1)], `${e.name}: a reason for ${key}, which is not a field`);
      }
    }
  });

  it('finds each extension by its name, its deprecated names and its types', () => {
    for (const e of EXTENSIONS) {
      for (const name of [e.name, ...e.deprecatedNames]) assert.equal(extensionByName(name)?.name, e.name, name);
      assert.equal(extensionByTypeName(e.typeName)?.name, e.name, e.typeName);
      if (isHttpFilter(e)) {
        assert.equal(httpFilterByTypeName(e.typeName), e);
        if (e.perRouteTypeName) assert.equal(httpFilterByTypeName(e.perRouteTypeName), e);
      }
    }
  });
});
