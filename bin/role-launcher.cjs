'use strict';
// Runs a process role's bundle (dist/roles/<role>.cjs, made by scripts/bundle.mjs) with V8's code
// cache, so that start-up, which counts on every hot restart and every worker replacement, does
// not parse it. `proxy` loads the supervisor through load(); the supervisor forks this file with
// the role's name (`node role-launcher.cjs worker worker_0`); the build runs it with
// --make-code-cache <role> to write the cache. A cache V8 rejects (another Node binary or V8
// flags, such as --cpu-prof) only costs the parse it would have saved.
/**
 * The variable a child forked with V8 flags of its role finds its IPC channel's descriptor in,
 * instead of Node's own NODE_CHANNEL_FD (see launchOptions).
 */
const DEFERRED_CHANNEL = 'PROXY_DEFERRED_CHANNEL_FD';
forgetHeapSizingFlags();
openDeferredChannel();
const { readFileSync, renameSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { dirname, join } = require('node:path');
const vm = require('node:vm');

const rolesDir = join(__dirname, '..', 'dist', 'roles');

/**
 * Dependencies a process loads only when its configuration needs them (gRPC services and xDS
 * over gRPC; RE2 regexes; protobuf encodings, see LIBRARIES_INSIDE), each built as a bundle of its own (dist/roles/<bundle>.cjs, by
 * scripts/bundle.mjs) with its own code cache, and loaded from it by the roles' `require`. Inside
 * the roles' bundles they would be text that every process holds for its whole life, used or not
 * (0.6 MB of the worker's 1.26 MB, and of the supervisor's 1.30 MB). Required from node_modules
 * instead, without a code cache, grpc-js takes 80-90 ms to load; from its bundle, 31-36 ms.
 */
const LIBRARIES = { '@grpc/grpc-js': 'lib-grpc-js', re2js: 'lib-re2js', protobufjs: 'lib-protobufjs' };

/**
 * The libraries a role's own bundle holds all the same, because the role runs them at every
 * start: the supervisor reads configuration (protobufjs) as it starts. A worker uses protobufjs
 * only to encode and decode protobuf messages (gRPC calls, tracing encodings), the admin only
 * for /config_dump's masks and /tap's configurations, and each loads it then
 * (shared/protobufjs.ts): 1.2-1.4 MB of its memory otherwise, and 150 KB of its bundle's text.
 */
const LIBRARIES_INSIDE = { supervisor: ['protobufjs'] };

/** The libraries role `role` requires from their own bundles. */
function librariesOutside(role) {
  return Object.keys(LIBRARIES).filter((pkg) => !(LIBRARIES_INSIDE[role] ?? []).includes(pkg));
}

/** Bundles already run in this process, by name (a library is run once, whoever asks). */
const loaded = new Map();

/** What a bundle's `require` has been asked for once already (see underDefaultFlags). */
const requiredOnce = new Set();

/**
 * The `require` a bundle runs with: Node's, from the bundle's place, but for the libraries above.
 * A module's first load runs under V8's default flags, so that its code cache is taken.
 */
function requireFor(file) {
  const required = Module.createRequire(file);
  const requireOne = (id) => (Object.hasOwn(LIBRARIES, id) ? load(LIBRARIES[id]) : required(id));
  const libraryOrModule = (id) => {
    if (requiredOnce.has(id)) return requireOne(id);
    requiredOnce.add(id);
    return underDefaultFlags(() => requireOne(id));
  };
  return Object.assign(libraryOrModule, { resolve: required.resolve, cache: required.cache, main: required.main, extensions: required.extensions });
}

/** The role's (or library's) module.exports, once its top level has run. */
function load(role, makeCodeCache = false) {
  const done = loaded.get(role);
  if (done) return done.exports;
  const file = join(rolesDir, `${role}.cjs`);
  const cacheFile = `${file}.v8cache`;
  // The build writes bundles in ASCII (scripts/bundle.mjs): latin1 reads them without decoding.
  // They are written already inside Node's module wrapper, so the text read is the text compiled.
  const source = readFileSync(file, 'latin1');
  let cachedData;
  if (!makeCodeCache) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // no cache: compile from the source
    }
  }
  // No import() in a bundle: a script has no module loader (Node 20's default-loader option for
  // vm is experimental, warns, and is lost with a code cache); dependencies outside the bundle
  // are required.
  const script = new vm.Script(source, { filename: file, cachedData });
  const module = { exports: {}, filename: file, id: file };
  loaded.set(role, module);
  script.runInThisContext()(module.exports, requireFor(file), module, file, dirname(file));
  if (makeCodeCache) {
    // After the top level ran, the cache holds every function it compiled, not only the outermost
    // (the build's warm-up run then adds what serving compiles: see WARM_UP_RUN).
    writeCache(script, cacheFile);
  } else if (process.env[WARM_UP_RUN] === '1') {
    process.on('exit', () => writeCache(script, cacheFile));
  }
  return module.exports;
}

/**
 * The build's warm-up run (scripts/warm-code-cache.mjs) sets this in a proxy it starts and sends
 * requests through: each process of that tree writes its role's code cache again as it exits,
 * with every function that start-up, serving and the admin endpoints compiled, not only the top
 * level (measured on the bench bootstrap: a worker's first request ~20 ms cold).
 */
const WARM_UP_RUN = 'PROXY_BUILD_CODE_CACHE_RUN';

function writeCache(script, cacheFile) {
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  // V8 stamps a cache with its flags' hash: made under the default flags, as every start reads it.
  writeFileSync(tmp, underDefaultFlags(() => script.createCachedData()));
  renameSync(tmp, cacheFile);
}

// A V8 flag set once a process runs changes V8's flag hash when it is not at its default, and
// with it V8 refuses every code cache it checks after, Node's own for its built-in modules among
// them (see forgetHeapSizingFlags). A flag shortening the memory reducer's start delay (8 s to
// 1 s, so that an idle process gives back start-up's heap pages sooner) was measured to make
// loading node:http2 after start take 29 ms instead of 12, node:tls 11 instead of 6, and
// grpc-js's bundle with the modules it needs 60 instead of 31-36; V8's own delay reaches the same
// settled figures seven seconds later. The one flag a role keeps set (ROLE_RUNTIME_V8_FLAGS) is
// set back to its default around each module's first load (underDefaultFlags).

/**
 * The V8 flags a role's process runs with, given on its command line by whoever starts it (the
 * supervisor forks, the build making the code cache, the code cache's test): V8 refuses a code
 * cache made under other flags, so all of them read this one list.
 *
 * A worker's young generation is held to 8 MB per semi-space (V8's default on 64-bit grows it to
 * 16 MB). Under 1,000 keep-alive connections a worker's in-flight requests survive scavenges
 * and V8 grows the young generation to its maximum, two semi-spaces, committed for good:
 * scripts/bench/memory.ts measured the worker's peak at 90-91 MB with 8 against 142-151 MB with
 * the default. At 50 connections the garbage collector's share of the worker's CPU profile stayed
 * where it was (2.7-2.9% against 2.8-3.0%): what survives a scavenge there is small either way.
 * The flag must be on the command line: V8 sizes the young generation when the process starts
 * (set at run time, the peak stayed at 140-145 MB; --semi-space-growth-factor, which V8 does read
 * at run time, only brought it to 110-115 MB). See forgetHeapSizingFlags for why it is then set
 * back to its default.
 */
const ROLE_V8_FLAGS = { supervisor: [], admin: [], worker: ['--max-semi-space-size=8'] };

function v8FlagsOf(role) {
  return ROLE_V8_FLAGS[role] ?? [];
}

/**
 * The options the supervisor forks role `role` with, this file being the module forked: Node's
 * options `execArgv`, then the role's V8 flags.
 *
 * Node opens a forked child's IPC channel while it boots, before any of the child's code runs,
 * and that loads 30-odd of its built-in modules (child_process, net, streams). A role's V8 flag
 * changes V8's flag hash until forgetHeapSizingFlags runs, so V8 refuses Node's code cache for
 * all of them: a child forked with --max-semi-space-size=8 reached its first line in 57-63 ms,
 * 44-49 ms without the flag (medians of 21 forks, three runs each). Such a role is forked through
 * /bin/sh, which moves the descriptor to DEFERRED_CHANNEL and execs Node: Node boots without a
 * channel, and the launcher opens it once the flags are back at their defaults
 * (openDeferredChannel): 45-50 ms. It is done as Node does it, through child_process's
 * _forkChild, which is not documented: where a Node has no such function, the role is forked
 * as Node forks, and only boots slower.
 */
function launchOptions(role, execArgv) {
  const flags = v8FlagsOf(role);
  if (flags.length === 0 || typeof require('node:child_process')._forkChild !== 'function') return { execArgv: [...execArgv, ...flags] };
  const moveChannel = `${DEFERRED_CHANNEL}=$NODE_CHANNEL_FD; export ${DEFERRED_CHANNEL}; unset NODE_CHANNEL_FD; exec "$0" "$@"`;
  return { execPath: '/bin/sh', execArgv: ['-c', moveChannel, process.execPath, ...execArgv, ...flags] };
}

/** Opens the IPC channel Node was not given (launchOptions), as Node opens its own. */
function openDeferredChannel() {
  const fd = process.env[DEFERRED_CHANNEL];
  if (fd === undefined) return;
  delete process.env[DEFERRED_CHANNEL];
  const serialization = process.env.NODE_CHANNEL_SERIALIZATION_MODE || 'json';
  delete process.env.NODE_CHANNEL_SERIALIZATION_MODE;
  require('node:child_process')._forkChild(Number(fd), serialization);
}

/**
 * Sets the flags that V8 reads only when it sizes the heap back to their defaults, once the heap
 * is sized (the cap stays: a young generation measured at 16 MB, two semi-spaces of 8, after the
 * reset). Any V8 flag of other than its default value changes V8's flag hash, and with it V8
 * refuses Node's own code cache for its built-in modules, of which a worker loads 64 at start
 * (http, net, streams, crypto): with the flag left set, requiring six of them took 26-42 ms
 * against 9-13 ms, and a worker replaced after a crash served its first request 10-15 ms later
 * (startup.ts medians 144-165 ms against 126-137 ms). Reset, they took 6-9 ms. It runs before
 * this file compiles a bundle, so the bundles' own code caches are made and read under the
 * default hash too.
 */
function forgetHeapSizingFlags() {
  if (!process.execArgv.some((flag) => flag.startsWith('--max-semi-space-size'))) return;
  setV8Flags('--max-semi-space-size=0');
}

/**
 * V8 flags a role sets once its bundle's top level has run, and keeps: flags V8 reads while the
 * process runs, which would cost the role's start if given on its command line (see
 * forgetHeapSizingFlags), each with the setting that is its default.
 *
 * A worker's old generation grows by at most half its live size (V8's floor of 8 MB a step
 * stays) before V8 collects it. Under 1,000 keep-alive connections a worker's in-flight
 * requests outlive the young generation's collections and are promoted, and V8, on a machine
 * with memory to spare, let the old generation grow to up to four times its live size before a
 * full collection: scripts/bench/memory.ts measured the worker's peak, over 30 s of that load,
 * at 110-112 MB, and at 94.8-96.9 MB with the bound (25 and 50% measured alike: the 8 MB step
 * rules at these sizes; 100%, 93.5-102 MB), and 94-96 MB throughout a 120 s load. Where little
 * outlives a request (50 connections) V8 seldom runs a full collection either way: two proxies
 * loaded at once, one with the bound, one without, measured it at 1-2% of the CPU per request,
 * against 0.2% between two without. The bound is a flag V8 reads after each full collection
 * (--heap-growing-percent): set at run time, it counts in V8's flag hash like one given at
 * start, so a module's first load and the code caches' writing run under the defaults
 * (underDefaultFlags).
 */
const ROLE_RUNTIME_V8_FLAGS = { worker: [['--heap-growing-percent=50', '--heap-growing-percent=0']] };

/** The run-time flags this process has set, as [flag, its default] pairs (none while underDefaultFlags runs). */
let runtimeFlags = [];

/** Sets role `role`'s run-time flags (ROLE_RUNTIME_V8_FLAGS), unless given on the command line or in NODE_OPTIONS. */
function setRuntimeFlags(role) {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  runtimeFlags = (ROLE_RUNTIME_V8_FLAGS[role] ?? []).filter(([flag]) => !given.some((g) => g.startsWith(flag.split('=')[0])));
  for (const [flag] of runtimeFlags) setV8Flags(flag);
}

/**
 * Runs `fn` with the run-time flags at their defaults, and sets them again after: what V8
 * compiles from a code cache meanwhile (a module's first load: Node's own built-in modules,
 * a library's bundle) is taken, and a cache written is one every start can take.
 */
function underDefaultFlags(fn) {
  const flags = runtimeFlags;
  if (flags.length === 0) return fn();
  runtimeFlags = [];
  for (const [, reset] of flags) setV8Flags(reset);
  try {
    return fn();
  } finally {
    for (const [flag] of flags) setV8Flags(flag);
    runtimeFlags = flags;
  }
}

/**
 * v8.setFlagsFromString, without loading node:v8 first: that module loads Node's whole streams
 * stack (for heap snapshots), 8 ms compiled while the flag hash is still not the default one.
 * Its binding is the same function; reaching it through process.binding warns that the route is
 * deprecated (DEP0111), which is silenced for that one call. Where the binding is not there, the
 * public module does it.
 */
function setV8Flags(flags) {
  const quiet = process.noDeprecation;
  process.noDeprecation = true;
  try {
    process.binding('v8').setFlagsFromString(flags);
  } catch {
    require('node:v8').setFlagsFromString(flags);
  } finally {
    process.noDeprecation = quiet;
  }
}

module.exports = { load, requireFor, v8FlagsOf, launchOptions, setRuntimeFlags, underDefaultFlags, LIBRARIES, librariesOutside };

if (require.main === module) {
  if (process.argv[2] === '--make-code-cache') {
    load(process.argv[3], true);
    process.exit(0);
  }
  // A child role: argv[2] is the role; the role reads its name from argv[2] after the shift.
  const role = process.argv.splice(2, 1)[0];
  load(role);
  setRuntimeFlags(role);
}
