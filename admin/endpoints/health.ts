import type { AdminEndpoint } from '../endpoint.js';
import type { AdminState } from '../state.js';
import type { SupervisorClient } from '../supervisor-client.js';

/**
 * POST /healthcheck/fail and /healthcheck/ok: every inbound health check (the health-check
 * filter, in every worker) fails or passes again; /ready and /server_info report DRAINING
 * meanwhile. The supervisor holds the state and tells every worker, and any replacement worker
 * starts with it.
 */
export function healthEndpoints(state: AdminState, supervisor: SupervisorClient): AdminEndpoint[] {
  const set = (failing: boolean): AdminEndpoint['handle'] => async () => {
    state.healthCheckFailing = failing;
    // Answered once every worker applies it: a script may act on the answer at once.
    await supervisor.request((id) => ({ type: 'healthcheck', id, failing }));
    return { status: 200, body: 'OK\n' };
  };
  return [
    { path: '/healthcheck/fail', help: 'cause the server to fail health checks', mutates: true, handle: set(true) },
    { path: '/healthcheck/ok', help: 'cause the server to pass health checks', mutates: true, handle: set(false) },
  ];
}

/**
 * POST /drain_listeners: stop the listeners (all, or `inboundonly`), at once or, with `graceful`,
 * after a drain sequence of --drain-time-s shaped by --drain-strategy (`skip_exit`: keep them
 * open after it). The supervisor runs the sequence; the answer is immediate.
 */
export function drainEndpoints(supervisor: SupervisorClient): AdminEndpoint[] {
  return [
    {
      path: '/drain_listeners',
      help: 'drain listeners',
      mutates: true,
      params: [
        { name: 'graceful', help: 'When draining listeners, enter a graceful drain period prior to closing listeners. This behaviour and duration is configurable via server options or CLI' },
        { name: 'skip_exit', help: 'When draining listeners, do not exit after the drain period. This must be used with graceful' },
        { name: 'inboundonly', help: 'Drains all inbound listeners. traffic_direction field in envoy_v3_api_msg_config.listener.v3.Listener is used to determine whether a listener is inbound or outbound.' },
      ],
      handle: async (rq) => {
        const graceful = rq.query.has('graceful');
        const skipExit = rq.query.has('skip_exit');
        if (skipExit && !graceful) return { status: 400, body: 'skip_exit requires graceful\n' };
        // Answered once every worker is draining (or has stopped accepting).
        await supervisor.request((id) => ({ type: 'drain_listeners', id, inboundOnly: rq.query.has('inboundonly'), graceful, skipExit }));
        return { status: 200, body: 'OK\n' };
      },
    },
  ];
}
