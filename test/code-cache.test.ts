import assert from 'node:assert/strict';
import { fork, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { describe, it } from 'node:test';

/**
 * The build's code caches (dist/roles/<role>.cjs.v8cache: scripts/bundle.mjs writes them from the
 * top level, scripts/warm-code-cache.mjs again from a run that served requests) must be ones V8
 * takes: a cache made under other V8 flags (one set before it was written, say) is silently
 * refused, and every start then compiles its bundle from source.
 */

const roles = join(import.meta.dirname, '..', 'dist', 'roles');
const launcherPath = join(import.meta.dirname, '..', 'bin', 'role-launcher.cjs');
const launcher = createRequire(import.meta.url)(launcherPath) as {
  v8FlagsOf(role: string): string[];
  launchOptions(role: string, execArgv: string[]): { execPath?: string; execArgv: string[] };
  LIBRARIES: Record<string, string>;
  librariesOutside(role: string): string[];
};

describe("the build's code caches", () => {
  // The roles' bundles, and the bundles of the libraries a role loads when its configuration needs them.
  for (const role of ['supervisor', 'worker', 'admin', ...Object.values(launcher.LIBRARIES)]) {
    it(`are taken by V8 for the ${role}'s bundle, under the role's V8 flags`, () => {
      // A process of its own, as the role's runs: with the role's flags (bin/role-launcher.cjs),
      // which the launcher, loaded first, sets back to their defaults where V8 reads them only at start.
      const check = [
        `require(${JSON.stringify(join(import.meta.dirname, '..', 'bin', 'role-launcher.cjs'))});`,
        `const { readFileSync } = require('node:fs');`,
        `const file = ${JSON.stringify(join(roles, `${role}.cjs`))};`,
        `const script = new (require('node:vm').Script)(readFileSync(file, 'latin1'), { filename: file, cachedData: readFileSync(file + '.v8cache') });`,
        `process.stdout.write(String(script.cachedDataRejected));`,
      ].join('\n');
      const run = spawnSync(process.execPath, [...launcher.v8FlagsOf(role), '-e', check], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout, 'false');
    });
  }
});

describe("a worker's young generation", () => {
  it('stays capped at its flag after the launcher sets the flag back to its default', () => {
    // Objects kept alive in a ring make V8 grow the young generation to its maximum (32 MB by
    // default on 64-bit): with the worker's flags, two semi-spaces of 8 MB.
    const check = [
      `require(${JSON.stringify(join(import.meta.dirname, '..', 'bin', 'role-launcher.cjs'))});`,
      `const ring = new Array(200000);`,
      `for (let i = 0; i < 3e6; i++) ring[i % ring.length] = { a: i, b: [i] };`,
      `const young = require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');`,
      `process.stdout.write(String(young.space_size / 1048576));`,
    ].join('\n');
    const capped = spawnSync(process.execPath, [...launcher.v8FlagsOf('worker'), '-e', check], { encoding: 'utf8' });
    assert.equal(capped.status, 0, capped.stderr);
    assert.ok(Number(capped.stdout) <= 16, `young generation ${capped.stdout} MB`);
    // The same load without the flags grows it past that: the check can tell the two apart.
    const free = spawnSync(process.execPath, ['-e', check], { encoding: 'utf8' });
    assert.ok(Number(free.stdout) > 16, `young generation without the flag ${free.stdout} MB`);
  });
});

describe("a worker's IPC channel", () => {
  it("is opened by the launcher once the role's flags are back at their defaults, not by Node as it boots", async () => {
    // What Node loaded before the child's first line says who opened the channel: Node loads
    // child_process for it while it boots, under the role's V8 flags (which refuse its code cache).
    const dir = mkdtempSync(join(tmpdir(), 'deferred-channel-'));
    try {
      const probe = join(dir, 'probe.cjs');
      writeFileSync(
        probe,
        [
          `const atBoot = { childProcessLoaded: process.moduleLoadList.includes('NativeModule child_process'), channel: typeof process.send === 'function' };`,
          `require(${JSON.stringify(launcherPath)});`,
          `process.on('message', (m) => { process.send({ atBoot, flags: process.execArgv, echo: m }); process.disconnect(); });`,
        ].join('\n'),
      );
      const run = async (options: { execPath?: string; execArgv: string[] }) => {
        const child = fork(probe, [], { ...options, serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
        // A Map and a BigInt: only the advanced serialization carries them.
        child.send({ map: new Map([['a', 1n]]) });
        const reply = await new Promise<{ atBoot: { childProcessLoaded: boolean; channel: boolean }; flags: string[]; echo: unknown }>((resolve, reject) => {
          child.once('message', resolve as (m: unknown) => void);
          child.once('exit', (code) => reject(new Error(`the probe exited (${code}) without answering`)));
        });
        if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
        return reply;
      };
      const flags = launcher.v8FlagsOf('worker');
      assert.ok(flags.length > 0, 'the worker has V8 flags of its own');
      const deferred = await run(launcher.launchOptions('worker', []));
      assert.deepEqual(deferred, { atBoot: { childProcessLoaded: false, channel: false }, flags, echo: { map: new Map([['a', 1n]]) } });
      // Forked as Node forks, the same probe finds its channel open and child_process loaded.
      const direct = await run({ execArgv: flags });
      assert.deepEqual(direct.atBoot, { childProcessLoaded: true, channel: true });
      // A role without V8 flags of its own is forked as Node forks.
      assert.deepEqual(launcher.launchOptions('admin', ['--trace-warnings']), { execArgv: ['--trace-warnings'] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a worker's run-time V8 flags", () => {
  it("count in V8's flag hash once set, and a module's first load through a bundle's require runs under the defaults", () => {
    // A cache made under the default flags (the build's, for the admin's and the supervisor's
    // bundles) is refused while the worker's run-time flags are set, which shows they are; a module
    // loaded for the first time through a bundle's require compiles such a cache all the same.
    const dir = mkdtempSync(join(tmpdir(), 'runtime-flags-'));
    try {
      const probe = join(dir, 'probe.cjs');
      const bundle = (role: string) => `[readFileSync(${JSON.stringify(join(roles, `${role}.cjs`))}, 'latin1'), readFileSync(${JSON.stringify(join(roles, `${role}.cjs.v8cache`))})]`;
      writeFileSync(probe, `const [source, cachedData] = globalThis.probeBundle;\nmodule.exports = new (require('node:vm').Script)(source, { cachedData }).cachedDataRejected;\n`);
      const check = [
        `const launcher = require(${JSON.stringify(join(import.meta.dirname, '..', 'bin', 'role-launcher.cjs'))});`,
        `const { readFileSync } = require('node:fs');`,
        `const compile = ([source, cachedData]) => new (require('node:vm').Script)(source, { cachedData }).cachedDataRejected;`,
        `launcher.setRuntimeFlags('worker');`,
        `const refusedWhileSet = compile(${bundle('admin')});`,
        `globalThis.probeBundle = ${bundle('supervisor')};`,
        `const refusedAtFirstLoad = launcher.requireFor(${JSON.stringify(join(roles, 'worker.cjs'))})(${JSON.stringify(probe)});`,
        `process.stdout.write(JSON.stringify({ refusedWhileSet, refusedAtFirstLoad }));`,
      ].join('\n');
      const run = spawnSync(process.execPath, ['-e', check], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { refusedWhileSet: true, refusedAtFirstLoad: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the libraries a role loads when its configuration needs them', () => {
  it("are outside the roles' bundles, and a role's require gets each one's own bundle, run once", () => {
    for (const role of ['supervisor', 'worker']) {
      const text = readFileSync(join(roles, `${role}.cjs`), 'latin1');
      for (const pkg of launcher.librariesOutside(role)) assert.ok(text.includes(`require(${JSON.stringify(pkg)})`), `${role} requires ${pkg} from outside`);
    }
    // The worker and the admin load protobufjs when they first need it; the supervisor holds it.
    assert.ok(launcher.librariesOutside('worker').includes('protobufjs') && launcher.librariesOutside('admin').includes('protobufjs'));
    assert.ok(!launcher.librariesOutside('supervisor').includes('protobufjs'));
    assert.ok(readFileSync(join(roles, 'admin.cjs'), 'latin1').includes('require("protobufjs")'), 'admin requires protobufjs from outside');
    const check = [
      `const launcher = require(${JSON.stringify(join(import.meta.dirname, '..', 'bin', 'role-launcher.cjs'))});`,
      `const re2 = launcher.load('lib-re2js');`,
      `const grpc = launcher.load('lib-grpc-js');`,
      `const protobuf = launcher.load('lib-protobufjs');`,
      `const same = launcher.load('lib-re2js') === re2 && launcher.load('lib-grpc-js') === grpc && launcher.load('lib-protobufjs') === protobuf;`,
      `const varint = Array.from(protobuf.Writer.create().uint64(300).finish());`,
      `process.stdout.write(JSON.stringify({ same, matches: re2.RE2JS.compile('^a+b$').matches('aaab'), credentials: typeof grpc.credentials.createInsecure, varint }));`,
    ].join('\n');
    const run = spawnSync(process.execPath, ['-e', check], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { same: true, matches: true, credentials: 'function', varint: [172, 2] });
  });
});
