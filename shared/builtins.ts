import { createRequire } from 'node:module';

/**
 * Node's built-in modules that a process loads when its configuration first needs them, not at
 * start: TLS, HTTP/2, compression, UDP, the profilers, crypto where only certificates need it,
 * and in the supervisor HTTP (health checks), DNS (DNS clusters) and threads (a kill_timeout). Each one Node loads compiles its
 * JavaScript on first use; together they were ~10 ms of every worker's start (a replacement
 * worker's too) for a bootstrap that uses none of them. Types come from `import type`.
 * Also those a process needs only once it is past the start of its workers: in the supervisor,
 * crypto (the hot-restart seal, the base id's secret, the configuration's hash) and v8 (the
 * configuration passed between epochs), ~5 ms that a new epoch's first worker was forked after;
 * everywhere, v8 for the idle compiler switch.
 */

const load = createRequire(import.meta.url);
const loaded = new Map<string, unknown>();

function builtin<T>(name: string): () => T {
  return () => {
    let module = loaded.get(name);
    if (module === undefined) loaded.set(name, (module = load(name)));
    return module as T;
  };
}

export const tlsModule = builtin<typeof import('node:tls')>('node:tls');
export const http2Module = builtin<typeof import('node:http2')>('node:http2');
export const zlibModule = builtin<typeof import('node:zlib')>('node:zlib');
export const cryptoModule = builtin<typeof import('node:crypto')>('node:crypto');
export const httpModule = builtin<typeof import('node:http')>('node:http');
export const httpsModule = builtin<typeof import('node:https')>('node:https');
export const dnsPromisesModule = builtin<typeof import('node:dns/promises')>('node:dns/promises');
export const workerThreadsModule = builtin<typeof import('node:worker_threads')>('node:worker_threads');
export const dgramModule = builtin<typeof import('node:dgram')>('node:dgram');
export const inspectorModule = builtin<typeof import('node:inspector/promises')>('node:inspector/promises');
export const v8Module = builtin<typeof import('node:v8')>('node:v8');
