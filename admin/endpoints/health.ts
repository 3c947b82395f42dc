import type { AdminEndpoint } from '../endpoint.js';
import type { AdminState } from '../state.js';

/**
 * POST /healthcheck/fail and /healthcheck/ok: every inbound health check (the health-check
 * filter, in every worker) fails or passes again; /ready and /server_info report DRAINING
 * meanwhile. The supervisor holds the state and tells every worker, and any replacement worker
 * starts with it.
 */
export function healthEndpoints(state: AdminState): AdminEndpoint[] {
  const set = (failing: boolean): AdminEndpoint['handle'] => () => {
    state.healthCheckFailing = failing;
    state.notify({ type: 'healthcheck', failing });
    return { status: 200, body: 'OK\n' };
  };
  return [
    { path: '/healthcheck/fail', help: 'cause the server to fail health checks', mutates: true, handle: set(true) },
    { path: '/healthcheck/ok', help: 'cause the server to pass health checks', mutates: true, handle: set(false) },
  ];
}
