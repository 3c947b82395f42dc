import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const proxyBin = join(repoRoot, 'bin', 'proxy.js');
/** The `proxy` command as npm installs it (bin/proxy: a shell script that runs bin/proxy.js). */
export const proxyCommand = join(repoRoot, 'bin', 'proxy');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `proxy` command (compiled; `npm test` builds first) and collects its output:
 * bin/proxy.js with this Node, or `command` (a path to bin/proxy, or a link to it) with this Node
 * first on PATH.
 */
export function runProxy(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 20_000, command?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command ?? process.execPath, command ? args : [proxyBin, ...args], {
      cwd: repoRoot,
      env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`proxy ${args.join(' ')} did not exit within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A temporary directory removed by the returned cleanup function. */
export function tempDir(prefix = 'proxy-test-'): { dir: string; file: (name: string, content: string | Uint8Array) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    file(name, content) {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
