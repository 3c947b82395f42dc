// Load from wrk (Debian package `wrk`), or autocannon when wrk is not installed, for the bench
// scripts: requests, req/s, p50 and p99 latency (ms) and errors of one run.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pinned } from './pinning.js';

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface LoadShape {
  connections: number;
  /** wrk threads (autocannon has one). */
  threads?: number;
  /** Every request on a new connection (`Connection: close`). */
  close?: boolean;
  /** The core wrk runs on (pinning.ts); negative or absent: not pinned. */
  core?: number;
}

export const useWrk = spawnSync('wrk', ['--version']).error === undefined;
const root = join(import.meta.dirname, '../..');

export function loadToolSummary(shape: LoadShape): string {
  return useWrk ? `wrk -t${shape.threads ?? 1} -c${shape.connections}` : `autocannon -c${shape.connections}`;
}

function wrkArgs(url: string, seconds: number, shape: LoadShape): string[] {
  return [`-t${shape.threads ?? 1}`, `-c${shape.connections}`, `-d${seconds}s`, '--latency', ...(shape.close ? ['-H', 'Connection: close'] : []), url];
}

function parseWrk(out: string): LoadResult {
  const ms = (label: string) => {
    const m = new RegExp(`${label}\\s+([\\d.]+)(us|ms|s)`).exec(out);
    if (!m) return NaN;
    return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
  };
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)?.slice(1).reduce((s, n) => s + Number(n), 0) ?? 0);
  return { requests, rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0), p50: ms('50%'), p99: ms('99%'), errors };
}

/** One load of `seconds` against `url`, waited for. */
export function runLoad(url: string, seconds: number, shape: LoadShape): LoadResult {
  const core = shape.core ?? -1;
  if (useWrk) return parseWrk(spawnSync(...pinned(core, 'wrk', wrkArgs(url, seconds, shape)), { encoding: 'utf8' }).stdout);
  const out = spawnSync(...pinned(core, process.execPath, [join(root, 'node_modules/autocannon/autocannon.js'), '-c', String(shape.connections), '-d', String(seconds), ...(shape.close ? ['-H', 'connection=close'] : []), '-j', url]), { encoding: 'utf8' }).stdout;
  const r = JSON.parse(out);
  return { requests: r.requests.total, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

/** wrk against `url` in the background (two loads at once); the child joins `children`. */
export function runWrkAsync(url: string, seconds: number, shape: LoadShape, children: ChildProcess[]): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(...pinned(shape.core ?? -1, 'wrk', wrkArgs(url, seconds, shape)), { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('error', reject).once('exit', () => resolve(parseWrk(out)));
  });
}
