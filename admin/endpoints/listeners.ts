import { JSON_TYPE, protoJson, type AdminEndpoint } from '../endpoint.js';
import type { AdminState } from '../state.js';

/**
 * /listeners: every listener's name and the address it listens on, with the port the kernel
 * chose for port 0. Text: `<name>::<address>` per line; `format=json`: envoy.admin.v3.Listeners.
 */

function socketAddress(address: string): Record<string, unknown> {
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(address);
  if (!m) return { pipe: { path: address } };
  return { socket_address: { address: m[1], port_value: Number(m[2]) } };
}

export function listenerEndpoints(state: AdminState): AdminEndpoint[] {
  return [
    {
      path: '/listeners',
      help: 'print listener info',
      mutates: false,
      params: [{ name: 'format', help: 'File format to use', choices: ['text', 'json'] }],
      handle: (rq) => {
        const listeners = state.server.listeners;
        if (rq.query.get('format') === 'json') {
          return {
            status: 200,
            contentType: JSON_TYPE,
            body: protoJson({ listener_statuses: listeners.map((l) => ({ name: l.name, local_address: socketAddress(l.address) })) }),
          };
        }
        return { status: 200, body: listeners.map((l) => `${l.name}::${l.address}\n`).join('') };
      },
    },
  ];
}
