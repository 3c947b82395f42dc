// Part of the build (scripts/build.mjs): one file per process role, so that a process starts by
// compiling one script instead of resolving and compiling ~150 modules, and V8's code cache for
// that script, so that it is not even parsed. Measured on Node 20 (issue 18): loading the
// worker's modules took 370 ms from dist/, 210 ms as one ES module, 99 ms as one script with its
// code cache. Node 20 has no code cache for ES modules (module.enableCompileCache is Node 22), so
// the bundles are CommonJS scripts, compiled by bin/role-launcher.cjs through vm.Script. esbuild
// (a pinned dev dependency; tsx runs on it too) bundles in about 2 s, where tsc takes 11 s to emit dist/.
//
// For each role, dist/roles/ gets:
//   <role>.cjs             the bundle (TypeScript sources, dependencies included but wasmoon and the libraries
//                          the role loads from their own bundles: librariesOutside in bin/role-launcher.cjs);
//   <role>.cjs.origins     bundle line and column -> source and line, for logs and profiles (shared/bundle-sources.ts);
//   <role>.cjs.v8cache     V8's code cache, made by running the bundle's top level once.
// For each library a role loads only when its configuration needs it (LIBRARIES in
// bin/role-launcher.cjs), lib-<name>.cjs and its .v8cache.
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
      // __moduleUrl appends the path to the package's URL as it is: it must need no escaping.
      if (!/^[\w./-]+$/.test(rel)) throw new Error(`${rel}: a source path a file: URL would have to escape`);
      const text = readFileSync(args.path, 'utf8').replaceAll('import.meta.url', `__moduleUrl(${JSON.stringify(rel)})`);
      return { contents: text, loader: 'ts' };
    });
  },
};

/**
 * long (protobufjs's 64-bit integers) compiles a WebAssembly module as it loads, for its multiply,
 * divide and remainder, and falls back to JavaScript where WebAssembly is missing. Compiling any
 * WebAssembly brings V8's WebAssembly compiler into the process: measured at 0.8-0.9 MB of the
 * resident memory of every process that loads protobufjs (the supervisor at every start), for arithmetic
 * that no request, stat or configuration read here does (protobufjs reads and writes 64-bit
 * varints with its own LongBits). In the bundles long sees no WebAssembly and takes its fallback.
 */
const longWithoutWebAssembly = {
  name: 'long-without-webassembly',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]long[\\/].*\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('new WebAssembly.Instance(')) throw new Error(`${args.path}: long no longer compiles WebAssembly as this build expects (see longWithoutWebAssembly)`);
      return { contents: `var WebAssembly = undefined;\n${text}`, loader: 'js' };
    });
  },
};

const banner = [
  '"use strict";',
  // dist/roles/ is two levels below the package root. The package's URL is made once: each module
  // reads its own at start (a logger's name, a require), ~150 URLs made from paths (~3 ms a start).
  'const __packageUrl = require("node:url").pathToFileURL(require("node:path").join(__dirname, "..", "..") + "/").href;',
  'const __moduleUrl = (rel) => __packageUrl + rel;',
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
 * Where each stretch of the bundle came from, for logs and profiles (read by
 * shared/bundle-sources.ts), as one binary file of little-endian 32-bit words:
 *   a header: ORIGINS_MAGIC, the bundle's line count L, the entry count E, the sources' JSON length J;
 *   per bundle line (0-based), the index of its first entry (L + 1 words, the last one E);
 *   per entry, the column where it starts (E words);
 *   per entry, its origin: 0 for code of no source of ours (dependencies are not ours to name),
 *   otherwise (source index + 1) << ORIGIN_LINE_BITS | the source line (1-based) (E words);
 *   then the sources, relative to the package root, as J bytes of JSON.
 * An entry lasts until the next one, across lines too: a new entry is written only where the
 * origin changes, so the table is a fraction of the source map. `columnShift` moves line 0's
 * columns right, for the wrapper written before the bundle's first line.
 */
const ORIGINS_MAGIC = 0x3147524f; // 'ORG1'
const ORIGIN_LINE_BITS = 20;

export function originTable(map, lineCount, columnShift) {
  const sources = map.sources.map((s) => relative(root, join(outDir, s)));
  if (sources.length >= 2 ** (32 - ORIGIN_LINE_BITS)) throw new Error(`${sources.length} sources: too many for the origin table`);
  const ours = sources.map((s) => !s.includes('node_modules'));
  const lineStarts = new Uint32Array(lineCount + 1);
  const columns = [];
  const origins = [];
  let source = 0;
  let originalLine = 0;
  const lines = map.mappings.split(';');
  for (let line = 0; line < lineCount; line++) {
    lineStarts[line] = columns.length;
    let column = 0;
    for (const segment of lines[line] ? lines[line].split(',') : []) {
      const f = decodeSegment(segment);
      column += f[0];
      let origin = 0;
      if (f.length >= 4) {
        source += f[1];
        originalLine += f[2];
        if (originalLine + 1 >= 2 ** ORIGIN_LINE_BITS) throw new Error(`${sources[source]}: line ${originalLine + 1} is past the origin table's reach`);
        if (ours[source]) origin = (((source + 1) << ORIGIN_LINE_BITS) | (originalLine + 1)) >>> 0;
      }
      if (origins.length > 0 && origins[origins.length - 1] === origin) continue;
      columns.push(column + (line === 0 ? columnShift : 0));
      origins.push(origin);
    }
  }
  lineStarts[lineCount] = columns.length;
  const json = Buffer.from(JSON.stringify(sources));
  const words = new Uint32Array(4 + lineStarts.length + 2 * columns.length);
  words.set([ORIGINS_MAGIC, lineCount, columns.length, json.length]);
  words.set(lineStarts, 4);
  words.set(columns, 4 + lineStarts.length);
  words.set(origins, 4 + lineStarts.length + columns.length);
  return Buffer.concat([Buffer.from(words.buffer), json]);
}

/**
 * The bundle goes to disk inside the function wrapper Node gives a CommonJS module, so that the
 * launcher compiles the text it read as it is: wrapping it when it loads would make a second copy
 * of the text in the heap (the string read and the string wrapped) at every start.
 */
const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) { ';
const WRAPPER_TAIL = '\n});';

/** esbuild's options for every bundle, role or library. */
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  write: false,
  logLevel: 'warning',
  metafile: true,
  // wasmoon finds its .wasm next to its own module; the Lua filter requires it when configured.
  external: ['wasmoon'],
  plugins: [longWithoutWebAssembly],
  // Without the indentation, comments and newlines a bundle is two thirds of its size (the
  // worker's 1.83 MB -> 1.26 MB), and every process holds its bundle's text for as long as it
  // runs (V8 compiles a function that the code cache lacks from it), and V8's table of the
  // text's line ends once a stack trace names a line (8 bytes a line: 360 KB for the
  // supervisor's 45,000). Names are kept: log lines, errors and profiles show them. Lines stay
  // short enough to print where an error points at one.
  minifyWhitespace: true,
  lineLimit: 200,
};

/**
 * Writes a bundle (ASCII only, so that the launcher reads it as latin1, with no UTF-8 decoding:
 * ~4 ms of every start for the worker's; esbuild escapes non-ASCII characters in strings and
 * identifiers, and what is left is in comments, where an escape is as good), then its code cache:
 * the launcher runs the bundle's top level (a role's module initialisation only: no role starts
 * without its supervisor) and writes what V8 compiled.
 */
function writeBundle(name, result, outfile, flags) {
  const js = result.outputFiles.find((f) => f.path === outfile);
  writeFileSync(outfile, WRAPPER_HEAD + js.text.replace(/[^\x00-\x7f]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`) + WRAPPER_TAIL);
  if (Object.values(result.metafile.outputs).some((o) => o.imports.some((i) => i.kind === 'dynamic-import'))) {
    throw new Error(`${name}: import() in a bundle; a script has no loader for it (require the module instead)`);
  }
  execFileSync(process.execPath, [...flags, join(root, 'bin/role-launcher.cjs'), '--make-code-cache', name], { stdio: 'inherit' });
  return js;
}

export async function bundleRoles() {
  const started = Date.now();
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  // The libraries a role loads only when its configuration needs them (see LIBRARIES in
  // bin/role-launcher.cjs): a bundle each, outside the roles'.
  for (const [pkg, name] of Object.entries(launcher.LIBRARIES)) {
    const outfile = join(outDir, `${name}.cjs`);
    const result = await build({ ...common, stdin: { contents: `module.exports = require(${JSON.stringify(pkg)});`, resolveDir: root, loader: 'js' }, outfile });
    writeBundle(name, result, outfile, []);
  }
  for (const role of ROLES) {
    const outfile = join(outDir, `${role}.cjs`);
    const result = await build({
      ...common,
      entryPoints: [join(root, role, 'main.ts')],
      outfile,
      sourcemap: 'external',
      sourcesContent: false,
      external: [...common.external, ...launcher.librariesOutside(role)],
      define: { __PROXY_BUNDLE__: 'true' },
      banner: { js: banner },
      plugins: [...common.plugins, moduleUrls],
    });
    const map = result.outputFiles.find((f) => f.path === `${outfile}.map`);
    const js = writeBundle(role, result, outfile, launcher.v8FlagsOf(role));
    writeFileSync(`${outfile}.origins`, originTable(JSON.parse(map.text), js.text.split('\n').length, WRAPPER_HEAD.length));
  }
  return Date.now() - started;
}
