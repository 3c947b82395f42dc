import { addressJson } from '../../shared/address.js';
import { rdsUsersOf } from '../../shared/config/resources.js';
import { JSON_TYPE, protoJson, type AdminEndpoint } from '../endpoint.js';
import type { AdminState } from '../state.js';

/**
 * /listeners: every listener's name and the address it listens on, with the port the kernel
 * chose for port 0. Text: `<name>::<address>` per line; `format=json`: envoy.admin.v3.Listeners.
 */

export function listenerEndpoints(state: AdminState): AdminEndpoint[] {
  return [
    {
      path: '/init_dump',
      help: 'dump current Envoy init manager information (experimental)',
      mutates: false,
      params: [{ name: 'mask', help: 'The desired component to dump unready targets. The mask is parsed as a Protobuf::FieldMask. For example, get the unready targets of all listeners with /init_dump?mask=listener`' }],
      // A listener's initialization ends when every worker serves it: until then (start-up, or a
      // crashed worker's replacement starting) each such worker is an unready target. A warming
      // listener (from LDS) waits for its route tables: each missing one is a target, named as Envoy names it.
      handle: (rq) => {
        const mask = rq.query.get('mask') || undefined;
        if (mask !== undefined && mask !== 'listener') return { status: 200, contentType: JSON_TYPE, body: protoJson({}) };
        const listeners = state.server.listeners.filter((l) => !l.stopped);
        const dumps = state.unreadyWorkers.length
          ? listeners.map((l) => ({ name: `init manager ${l.name}`, target_names: state.unreadyWorkers.map((w) => `target ${w} serving listener ${l.name}`) }))
          : [];
        for (const l of state.server.warmingListeners) {
          const missing = rdsUsersOf([l.config]).map((u) => u.name).filter((n) => state.server.routes[n] === undefined);
          if (missing.length) dumps.push({ name: `init manager Listener-local-init-manager ${l.name}`, target_names: missing.map((n) => `RdsRouteConfigSubscription ${n}`) });
        }
        return { status: 200, contentType: JSON_TYPE, body: protoJson(dumps.length ? { unready_targets_dumps: dumps } : {}) };
      },
    },
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
            body: protoJson({ listener_statuses: listeners.map((l) => ({ name: l.name, local_address: addressJson(l.address), ...(l.additional ? { additional_local_addresses: l.additional.addresses.map(addressJson) } : {}) })) }),
          };
        }
        return { status: 200, body: listeners.map((l) => `${l.name}::${l.address}\n`).join('') };
      },
    },
  ];
}
