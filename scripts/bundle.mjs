// Part of the build (scripts/build.mjs): one file per process role, so that a process starts by
// compiling one script instead of resolving and compiling ~150 modules, and V8's code cache for
// that script, so that it is not even parsed. Measured on Node 20 (issue 18): loading the
// worker's modules took 370 ms from dist/, 210 ms as one ES module, 99 ms as one script with its
// code cache. Node 20 has no code cache for ES modules (module.enableCompileCache is Node 22), so
// the bundles are CommonJS scripts, compiled by bin/role-launcher.cjs through vm.Script. esbuild
// (a pinned dev dependency; tsx runs on it too) bundles in about 2 s, where tsc takes 11 s to emit dist/.
//
// For each role, dist/roles/ gets:
//   <role>.cjs             the bundle (TypeScript sources, dependencies included but wasmoon);
//   <role>.cjs.lines.json  bundle line -> source and line, for logs and profiles (shared/bundle-sources.ts);
//   <role>.cjs.v8cache     V8's code cache, made by running the bundle's top level once.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Each role's V8 flags: its code cache is made under them (V8 refuses one made under others). */
const launcher = createRequire(import.meta.url)('../bin/role-launcher.cjs');
const outDir = join(root, 'dist/roles');
const ROLES = ['supervisor', 'worker', 'admin'];

/**
 * `import.meta` does not exist in a CommonJS script: each of our modules' `import.meta.url`
 * becomes the URL of its TypeScript source, computed when the bundle runs (the package may move).
 * Log lines name those sources, as they do under tsx.
 */
const moduleUrls = {
  name: 'module-urls',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const rel = relative(root, args.path);
      const text = readFileSync(args.path, 'utf8').replaceAll('import.meta.url', `__moduleUrl(${JSON.stringify(rel)})`);
      return { contents: text, loader: 'ts' };
    });
  },
};

const banner = [
  '"use strict";',
  // dist/roles/ is two levels below the package root.
  'const __moduleUrl = (rel) => require("node:url").pathToFileURL(require("node:path").join(__dirname, "..", "..", rel)).href;',
].join('\n');

const VLQ = new Map([...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].map((c, i) => [c, i]));

/** A source map segment's fields (deltas), from base64 VLQ. */
function decodeSegment(text) {
  const out = [];
  let value = 0;
  let shift = 0;
  for (const c of text) {
    const digit = VLQ.get(c);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    out.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return out;
}

/**
 * Per bundle line (1-based), where it came from: [source index + 1, source line] pairs, from the
 * first mapping on the line into one of our sources; 0s where there is none (dependencies are not
 * ours to name). Read by shared/bundle-sources.ts.
 */
function lineTable(map, lineCount) {
  const sources = map.sources.map((s) => relative(root, join(outDir, s)));
  const ours = sources.map((s) => !s.includes('node_modules'));
  const lines = new Uint32Array((lineCount + 1) * 2);
  let source = 0;
  let originalLine = 0;
  map.mappings.split(';').forEach((segments, line) => {
    for (const segment of segments ? segments.split(',') : []) {
      const f = decodeSegment(segment);
      if (f.length < 4) continue;
      source += f[1];
      originalLine += f[2];
      if (lines[(line + 1) * 2] === 0 && ours[source]) {
        lines[(line + 1) * 2] = source + 1;
        lines[(line + 1) * 2 + 1] = originalLine + 1;
      }
    }
  });
  return { sources, lines: Buffer.from(lines.buffer).toString('base64') };
}

export async function bundleRoles() {
  const started = Date.now();
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  for (const role of ROLES) {
    const outfile = join(outDir, `${role}.cjs`);
    const result = await build({
      entryPoints: [join(root, role, 'main.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile,
      write: false,
      sourcemap: 'external',
      sourcesContent: false,
      // wasmoon finds its .wasm next to its own module; the Lua filter requires it when configured.
      external: ['wasmoon'],
      define: { __PROXY_BUNDLE__: 'true' },
      banner: { js: banner },
      plugins: [moduleUrls],
      logLevel: 'warning',
      metafile: true,
    });
    const js = result.outputFiles.find((f) => f.path === outfile);
    const map = result.outputFiles.find((f) => f.path === `${outfile}.map`);
    // ASCII only, so that the launcher reads it as latin1 (no UTF-8 decoding: ~4 ms of every start
    // for the worker's bundle). esbuild escapes non-ASCII characters in strings and identifiers;
    // what is left is in comments, where an escape is as good.
    writeFileSync(outfile, js.text.replace(/[^\x00-\x7f]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`));
    writeFileSync(`${outfile}.lines.json`, JSON.stringify(lineTable(JSON.parse(map.text), js.text.split('\n').length)));
    if (Object.values(result.metafile.outputs).some((o) => o.imports.some((i) => i.kind === 'dynamic-import'))) {
      throw new Error(`${role}: import() in a bundle; a script has no loader for it (require the module instead)`);
    }
    // The code cache: the launcher runs the bundle's top level (module initialisation only: no
    // role starts without its supervisor) and writes what V8 compiled.
    execFileSync(process.execPath, [...launcher.v8FlagsOf(role), join(root, 'bin/role-launcher.cjs'), '--make-code-cache', role], { stdio: 'inherit' });
  }
  return Date.now() - started;
}
