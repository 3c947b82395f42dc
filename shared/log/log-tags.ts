import { randomFillSync } from 'node:crypto';

/**
 * Envoy's connection and stream identities in its debug logs: `[Tags: "ConnectionId":"12"] ` and
 * `[Tags: "ConnectionId":"12","StreamId":"8419453858716183327"] ` (ENVOY_CONN_LOG and
 * ENVOY_STREAM_LOG, tags serialised in name order). A connection's id is a number of this
 * process, counted from 0 across downstream and upstream connections as Envoy counts them, kept
 * on the socket (so that a TLS socket over it and an HTTP/2 session's socket proxy see it); a
 * stream's is a random 64-bit number, drawn the first time a line names it.
 */

const CONNECTION_ID = Symbol.for('proxy.connection-id');
const STREAM_ID = Symbol.for('proxy.stream-id');

interface Carrier {
  [CONNECTION_ID]?: number;
  [STREAM_ID]?: string;
}

let nextConnectionId = 0;

/** A connection this process accepted or opened: its id from now on. */
export function newConnectionId(socket: object): number {
  const id = nextConnectionId++;
  (socket as Carrier)[CONNECTION_ID] = id;
  return id;
}

/** The id of a connection (one given none yet gets the next). */
export function connectionIdOf(socket: object | undefined | null): number {
  if (!socket) return 0;
  const c = socket as Carrier;
  return (c[CONNECTION_ID] ??= nextConnectionId++);
}

/** A TLS socket made over a raw one is the same connection. */
export function carryConnectionId(from: object, to: object): void {
  const id = (from as Carrier)[CONNECTION_ID];
  if (id !== undefined) (to as Carrier)[CONNECTION_ID] = id;
}

const random = new BigUint64Array(1);

function streamIdOf(stream: object): string {
  const c = stream as Carrier;
  if (c[STREAM_ID] === undefined) {
    randomFillSync(random);
    c[STREAM_ID] = random[0]!.toString();
  }
  return c[STREAM_ID];
}

export function connectionTag(socket: object | undefined | null): string {
  return `[Tags: "ConnectionId":"${connectionIdOf(socket)}"] `;
}

/** `stream`: the object that is the stream (the downstream request); `socket`: its connection. */
export function streamTag(socket: object | undefined | null, stream: object): string {
  return `[Tags: "ConnectionId":"${connectionIdOf(socket)}","StreamId":"${streamIdOf(stream)}"] `;
}

/** Headers as Envoy's header map prints them: a `'name', 'value'` line each (the message ends with a newline). */
export function headerLines(pairs: readonly (readonly [string, string])[]): string {
  let out = '';
  for (const [name, value] of pairs) out += `'${name}', '${value}'\n`;
  return out;
}
