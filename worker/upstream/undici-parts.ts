/**
 * undici's Client, Pool and connector, imported from undici's own modules rather than its index,
 * which also loads fetch, WebSocket, EventSource, cookies, caches and mocks that a worker never
 * uses: measured on Node 20, the index costs 206 ms and 21 MB of RSS to load, pool.js (with
 * client.js and connect.js) 82 ms and 12 MB. Types are the package's (undici-modules.d.ts).
 */
export { default as buildConnector } from 'undici/lib/core/connect.js';
export { default as Client } from 'undici/lib/dispatcher/client.js';
export { default as Pool } from 'undici/lib/dispatcher/pool.js';
