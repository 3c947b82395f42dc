import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cryptoModule } from './builtins.js';
import { distDir, packageRoot, runningCompiled } from './paths.js';

/**
 * The five-field version string of `--version` and `/server_info`:
 * `<revision>/<release>/<Clean|Modified>/<RELEASE|DEBUG>/<TLS library>`.
 *
 * The build (`npm ci` runs it) stamps the git revision and tree status into
 * dist/build-info.json; compiled JavaScript is a RELEASE build. Running the TypeScript sources
 * directly (tests, development) is a DEBUG build and reads git at that moment.
 */

export interface BuildInfo {
  revision: string;
  treeStatus: 'Clean' | 'Modified';
  /** Random, written by each build: two processes with the same one run the same code. */
  buildId?: string;
}

const UNKNOWN_REVISION = '0'.repeat(40);

export function readGitBuildInfo(): BuildInfo {
  try {
    const revision = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: packageRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: packageRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return { revision, treeStatus: status.trim() === '' ? 'Clean' : 'Modified' };
  } catch {
    // not a git checkout (an unpacked tarball): the tree cannot be shown to be clean
    return { revision: UNKNOWN_REVISION, treeStatus: 'Modified' };
  }
}

export const buildInfoFile = join(distDir, 'build-info.json');

let cachedBuildInfo: BuildInfo | undefined;

function buildInfo(): BuildInfo {
  if (cachedBuildInfo) return cachedBuildInfo;
  if (runningCompiled) {
    try {
      return (cachedBuildInfo = JSON.parse(readFileSync(buildInfoFile, 'utf8')) as BuildInfo);
    } catch {
      // fall through: a dist/ copied without its stamp
    }
  }
  return (cachedBuildInfo = readGitBuildInfo());
}

export const releaseVersion: string = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')).version;

/** The TLS library Node links (OpenSSL; with `-FIPS` when FIPS mode is on). */
export function tlsLibrary(): string {
  if (!process.versions.openssl) return 'none';
  let fips = 0;
  try {
    fips = cryptoModule().getFips();
  } catch {
    fips = 0;
  }
  return fips ? 'OpenSSL-FIPS' : 'OpenSSL';
}

let cachedVersion: string | undefined;

/**
 * What a result computed by this code may be reused by another process for (a hot restart's
 * configuration hand-over): the build's id, or, running from sources, this process alone.
 */
export function buildIdentity(): string {
  return (runningCompiled ? buildInfo().buildId : undefined) ?? `process ${process.pid} ${performance.timeOrigin}`;
}

export function versionString(): string {
  if (cachedVersion) return cachedVersion;
  const info = buildInfo();
  cachedVersion = [info.revision, releaseVersion, info.treeStatus, runningCompiled ? 'RELEASE' : 'DEBUG', tlsLibrary()].join('/');
  return cachedVersion;
}

/** `{major_number, minor_number, patch}` of the release, for `node.user_agent_build_version`. */
export function semanticVersion(): { major_number: number; minor_number: number; patch: number } {
  const [major, minor, patch] = releaseVersion.split(/[.-]/).map((n) => Number(n) || 0);
  return { major_number: major ?? 0, minor_number: minor ?? 0, patch: patch ?? 0 };
}

/**
 * Hot restart compatibility: `<protocol version>.<shared memory layout size>`, compared by
 * `--hot-restart-version` and `GET /hot_restart_version`. Bump the protocol version whenever the
 * hot-restart messages or the shared-memory layout change incompatibly.
 */
export const HOT_RESTART_PROTOCOL_VERSION = 2;

/** The base-id shared-memory block (a file under /dev/shm), field by field, in bytes. */
export const SHARED_MEMORY_LAYOUT = [
  ['magic', 4],
  ['version', 4],
  ['size', 4],
  ['flags', 4],
  ['initializing_pid', 4],
  ['newest_pid', 4],
  ['original_start_time_ms', 8],
  // Since protocol 2: the family's secret, which seals every hot-restart datagram.
  ['secret', 32],
] as const;

export const SHARED_MEMORY_SIZE = SHARED_MEMORY_LAYOUT.reduce((sum, [, size]) => sum + size, 0);

export function hotRestartVersion(disabled: boolean): string {
  return disabled ? 'disabled' : `${HOT_RESTART_PROTOCOL_VERSION}.${SHARED_MEMORY_SIZE}`;
}
