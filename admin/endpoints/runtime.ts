import type { ToAdmin } from '../../shared/ipc.js';
import type { SupervisorClient } from '../supervisor-client.js';
import { finalValue, runtimeSnapshot } from '../../shared/runtime.js';
import { JSON_TYPE, protoJson, type AdminEndpoint } from '../endpoint.js';

/**
 * /runtime (the layers and every key's value per layer) and POST /runtime_modify (admin-layer
 * overrides; an empty value deletes one). The supervisor holds the layers: a modification goes
 * there and comes back to every process, this one included, as a new snapshot.
 */

const USAGE = 'usage: /runtime_modify?key1=value1&key2=value2&keyN=valueN\n       or send the parameters as form values\nuse an empty value to remove a previously added override';

export function runtimeEndpoints(supervisor: SupervisorClient): AdminEndpoint[] {
  return [
    {
      path: '/runtime',
      help: 'print runtime values',
      mutates: false,
      handle: () => {
        const snapshot = runtimeSnapshot();
        const entries: Record<string, { final_value: string; layer_values: string[] }> = {};
        for (const [key, values] of Object.entries(snapshot.entries)) entries[key] = { final_value: finalValue(values) ?? '', layer_values: values };
        return { status: 200, contentType: JSON_TYPE, body: protoJson({ entries, layers: snapshot.layers }) };
      },
    },
    {
      path: '/runtime_modify',
      help: 'Adds or modifies runtime values as passed in query parameters. To delete a previously added key, use an empty string as the value. Note that deletion only applies to overrides added via this endpoint; values loaded from disk can be modified via override but not deleted. E.g. ?key1=value1&key2=value2...',
      mutates: true,
      handle: async (rq) => {
        if (rq.params.length === 0) return { status: 400, body: USAGE };
        const result = await supervisor.request<Extract<ToAdmin, { type: 'runtime_modify_result' }>>((id) => ({ type: 'runtime_modify', id, overrides: rq.params }));
        if (!result) return { status: 503, body: 'the supervisor did not answer' };
        if (result.error) return { status: result.error.status, body: result.error.message };
        return { status: 200, body: 'OK\n' };
      },
    },
  ];
}
