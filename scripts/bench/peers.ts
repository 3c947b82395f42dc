// The bench's peers: nginx (one worker) and HAProxy (one thread) proxying to the same upstream as
// this proxy, when the machine has them (Debian packages nginx-light and haproxy), so that a user
// sees where this proxy stands on their own machine. Each runs from a configuration written into
// the bench's temporary directory, in the foreground, as one process whose CPU the bench reads.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';

export interface Peer {
  label: string;
  url: string;
  pid: number;
}

/** A port free now (the kernel's pick, released): nginx and HAProxy cannot report a port 0 they were given. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The version a command prints (on either stream), or undefined when it is not installed. */
function versionOf(command: string, args: string[], pattern: RegExp): string | undefined {
  const run = spawnSync(command, args, { encoding: 'utf8' });
  if (run.error) return undefined;
  return pattern.exec(`${run.stdout}${run.stderr}`)?.[1] ?? '?';
}

/** Resolves once `port` accepts a connection; rejects if `child` exits first. */
function listening(port: number, child: ChildProcess, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    child.once('exit', (code) => {
      if (!done) reject(new Error(`${name} exited (code ${code}) before listening on ${port}`));
    });
    const attempt = () => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        done = true;
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (!done) setTimeout(attempt, 50); // polls until the peer listens (a condition, checked again)
      });
    };
    attempt();
  });
}

function nginxConfig(dir: string, port: number, upstreamPort: number): string {
  return [
    'daemon off;',
    'master_process off;',
    'worker_processes 1;',
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'nginx-error.log')} warn;`,
    'events { worker_connections 4096; }',
    'http {',
    '  access_log off;',
    `  client_body_temp_path ${join(dir, 'nginx-body')};`,
    `  proxy_temp_path ${join(dir, 'nginx-proxy')};`,
    `  upstream bench { server 127.0.0.1:${upstreamPort}; keepalive 64; }`,
    '  server {',
    `    listen 127.0.0.1:${port};`,
    '    location / { proxy_pass http://bench; proxy_http_version 1.1; proxy_set_header Connection ""; }',
    '  }',
    '}',
    '',
  ].join('\n');
}

function haproxyConfig(port: number, upstreamPort: number): string {
  return [
    'global',
    '  nbthread 1',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 5s',
    '  timeout client 30s',
    '  timeout server 30s',
    'frontend bench',
    `  bind 127.0.0.1:${port}`,
    '  default_backend upstream',
    'backend upstream',
    '  http-reuse always',
    `  server up 127.0.0.1:${upstreamPort}`,
    '',
  ].join('\n');
}

/**
 * Starts the peers the machine has, each placed by `place` (the bench's pinning); `missing` names
 * the ones it does not, with the package that brings each. Their processes join `children` (the
 * bench stops them).
 */
export async function startPeers(dir: string, upstreamPort: number, children: ChildProcess[], place: (command: string, args: string[]) => [string, string[]]): Promise<{ peers: Peer[]; missing: string[] }> {
  const peers: Peer[] = [];
  const missing: string[] = [];
  const nginx = versionOf('nginx', ['-v'], /nginx\/(\S+)/);
  if (nginx === undefined) missing.push('nginx (Debian package nginx-light)');
  else {
    const port = await freePort();
    const conf = join(dir, 'nginx.conf');
    writeFileSync(conf, nginxConfig(dir, port, upstreamPort));
    const child = spawn(...place('nginx', ['-p', dir, '-e', join(dir, 'nginx-error.log'), '-c', conf]), { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(child);
    await listening(port, child, 'nginx');
    peers.push({ label: `nginx ${nginx}, 1 worker`, url: `http://127.0.0.1:${port}/`, pid: child.pid! });
  }
  const haproxy = versionOf('haproxy', ['-v'], /version (\d+\.\d+(?:\.\d+)?)/);
  if (haproxy === undefined) missing.push('HAProxy (Debian package haproxy)');
  else {
    const port = await freePort();
    const conf = join(dir, 'haproxy.cfg');
    writeFileSync(conf, haproxyConfig(port, upstreamPort));
    const child = spawn(...place('haproxy', ['-db', '-f', conf]), { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(child);
    await listening(port, child, 'HAProxy');
    peers.push({ label: `HAProxy ${haproxy}, 1 thread`, url: `http://127.0.0.1:${port}/`, pid: child.pid! });
  }
  return { peers, missing };
}
