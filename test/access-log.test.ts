import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HCM_TYPE, minimalBootstrap, ROUTER_TYPE, TCP_PROXY_TYPE } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { closedPort, startEcho, startUpstream, type Upstream } from './helpers/upstream.js';

/**
 * The access loggers end to end: a real proxy whose HTTP listener, TCP listener and admin log to
 * files, with traffic that succeeds, finds no route, and fails to connect upstream; then log
 * rotation through POST /reopen_logs, and a bad path refused at start-up.
 */

const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const HEALTH_CHECK_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck';

const tmp = tempDir();
const paths = {
  main: `${tmp.dir}/access.log`,
  errors: `${tmp.dir}/errors.json`,
  addresses: `${tmp.dir}/addresses.log`,
  tcp: `${tmp.dir}/tcp.log`,
  admin: `${tmp.dir}/admin.log`,
  listener: `${tmp.dir}/listener.log`,
};
let upstream: Upstream;
let echo: { port: number; server: import('node:net').Server };
let proxy: RunningProxy;
const base = () => `http://127.0.0.1:${proxy.ports.get('http')}`;
const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

function cluster(name: string, port: number): object {
  return {
    name,
    connect_timeout: '1s',
    type: 'STATIC',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
  };
}

before(async () => {
  upstream = await startUpstream('A');
  echo = await startEcho();
  const down = await closedPort();
  const bootstrap = {
    admin: {
      address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
      access_log: [{ name: 'admin', typed_config: { '@type': FILE_LOG, path: paths.admin, log_format: { text_format_source: { inline_string: '%REQ(:METHOD)% %REQ(:PATH)% %RESPONSE_CODE%\n' } } } }],
    },
    static_resources: {
      listeners: [
        {
          name: 'http',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: {
            '@type': HCM_TYPE,
            stat_prefix: 'http',
            route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [
              { name: 'api', match: { prefix: '/api/' }, route: { cluster: 'a', prefix_rewrite: '/' } },
              { match: { prefix: '/down' }, route: { cluster: 'down' } },
            ] }] },
            http_filters: [
              { name: 'envoy.filters.http.health_check', typed_config: { '@type': HEALTH_CHECK_TYPE, pass_through_mode: false, headers: [{ name: ':path', string_match: { exact: '/healthz' } }] } },
              { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } },
            ],
            access_log: [
              { name: 'envoy.access_loggers.file', filter: { not_health_check_filter: {} }, typed_config: { '@type': FILE_LOG, path: paths.main } },
              {
                name: 'envoy.access_loggers.file',
                filter: { status_code_filter: { comparison: { op: 'GE', value: { default_value: 400, runtime_key: 'access_log.errors.min_status' } } } },
                typed_config: { '@type': FILE_LOG, path: paths.errors, log_format: { json_format: {
                  code: '%RESPONSE_CODE%', flags: '%RESPONSE_FLAGS%', details: '%RESPONSE_CODE_DETAILS%', cluster: '%UPSTREAM_CLUSTER%', route: '%ROUTE_NAME%', body: '%LOCAL_REPLY_BODY%',
                } } },
              },
              { name: 'addresses', typed_config: { '@type': FILE_LOG, path: paths.addresses, format: '%REQ(X-REQUEST-ID)% %DOWNSTREAM_REMOTE_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS%\n' } },
            ],
          } }] }],
        },
        {
          name: 'tcp',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [{ filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: {
            '@type': TCP_PROXY_TYPE,
            stat_prefix: 'tcp',
            cluster: 'echo',
            access_log: [{ name: 'tcp', typed_config: { '@type': FILE_LOG, path: paths.tcp, format: '%UPSTREAM_HOST% %BYTES_RECEIVED% %BYTES_SENT% %PROTOCOL%\n' } }],
          } }] }],
        },
        {
          // No connection matches its one filter chain: each is closed, and logged by the listener itself.
          name: 'strict',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          access_log: [{ name: 'listener', typed_config: { '@type': FILE_LOG, path: paths.listener, format: '%RESPONSE_FLAGS% %DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%\n' } }],
          filter_chains: [{ filter_chain_match: { destination_port: 1 }, filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: 'strict', cluster: 'echo' } }] }],
        },
      ],
      clusters: [cluster('a', upstream.port), cluster('down', down), cluster('echo', echo.port)],
    },
  };
  proxy = await startProxy(bootstrap, ['--concurrency', '2', '--file-flush-interval-msec', '50']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  echo.server.close();
  tmp.cleanup();
});

describe('HTTP access logs', () => {
  it('write one line per request in Envoy\'s default format', async () => {
    const r = await httpRequest(`${base()}/api/echo?x=1`, { method: 'POST', body: 'hello', headers: { 'user-agent': 'test-agent', 'x-request-id': 'req-1' } });
    assert.equal(r.status, 200);
    const line = await waitFor('the access log line', () => lines(paths.main).find((l) => l.includes('"req-1"')));
    const port = proxy.ports.get('http');
    const m = /^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\] "POST \/api\/echo\?x=1 HTTP\/1\.1" 200 - 5 (\d+) (\d+) (\d+) "-" "test-agent" "req-1" "127\.0\.0\.1:(\d+)" "127\.0\.0\.1:(\d+)"$/.exec(line);
    assert.ok(m, line);
    assert.ok(Math.abs(Date.parse(m[1]!) - Date.now()) < 60_000);
    assert.equal(Number(m[2]), Buffer.byteLength(r.body), 'BYTES_SENT is the body sent downstream');
    assert.ok(Number(m[4]) <= Number(m[3]) + 1, 'the upstream service time fits in the duration');
    assert.equal(Number(m[5]), port);
    assert.equal(Number(m[6]), upstream.port);
  });

  it('record local replies with their response flags and details, and filter by status code', async () => {
    assert.equal((await httpRequest(`${base()}/nowhere`, { headers: { 'x-request-id': 'req-nr' } })).status, 404);
    assert.equal((await httpRequest(`${base()}/down`, { headers: { 'x-request-id': 'req-uf' } })).status, 503);
    assert.equal((await httpRequest(`${base()}/api/status?code=502`)).status, 502);
    const main = await waitFor('three more lines', () => {
      const l = lines(paths.main);
      return l.some((x) => x.includes('"req-nr"')) && l.some((x) => x.includes('"req-uf"')) && l.some((x) => x.includes('" 502 ')) ? l : undefined;
    });
    assert.match(main.find((l) => l.includes('"req-nr"'))!, /"GET \/nowhere HTTP\/1\.1" 404 NR 0 0 \d+ - /);
    assert.match(main.find((l) => l.includes('"req-uf"'))!, /"GET \/down HTTP\/1\.1" 503 UF 0 167 \d+ - .* "127\.0\.0\.1:\d+"$/);

    const errors = await waitFor('three error entries', () => {
      const l = lines(paths.errors);
      return l.length >= 3 ? l.map((x) => JSON.parse(x) as Record<string, unknown>) : undefined;
    });
    assert.deepEqual(errors.find((e) => e.code === 404), { code: 404, flags: 'NR', details: 'route_not_found', cluster: null, route: null, body: '' });
    assert.deepEqual(errors.find((e) => e.code === 503), {
      code: 503, flags: 'UF', details: 'upstream_reset_before_response_started{remote_connection_failure|delayed_connect_error:_Connection_refused}', cluster: 'down', route: null,
      body: 'upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: Connection refused',
    });
    assert.deepEqual(errors.find((e) => e.code === 502), { code: 502, flags: '-', details: 'via_upstream', cluster: 'a', route: 'api', body: '' });
    assert.ok(!errors.some((e) => e.code === 200), 'the status filter keeps successes out');
  });

  it('leave health checks out with not_health_check_filter', async () => {
    assert.equal((await httpRequest(`${base()}/healthz`, { headers: { 'x-request-id': 'req-hc' } })).status, 200);
    await httpRequest(`${base()}/api/`, { headers: { 'x-request-id': 'req-after-hc' } });
    await waitFor('the request after the health check', () => lines(paths.main).some((l) => l.includes('"req-after-hc"')) || undefined);
    assert.ok(!lines(paths.main).some((l) => l.includes('"req-hc"')));
  });

  it('survive log rotation: rename, POST /reopen_logs, and the next lines go to the new file', async () => {
    await httpRequest(`${base()}/api/`, { headers: { 'x-request-id': 'req-before-rotate' } });
    await waitFor('the line before rotation', () => lines(paths.main).some((l) => l.includes('"req-before-rotate"')) || undefined);
    renameSync(paths.main, `${paths.main}.1`);
    assert.equal((await httpRequest(`http://${proxy.admin}/reopen_logs`, { method: 'POST' })).status, 200);
    // Both workers must have reopened: send enough requests that each worker serves some.
    for (let i = 0; i < 8; i++) await httpRequest(`${base()}/api/`, { headers: { 'x-request-id': `req-rotated-${i}` } });
    const fresh = await waitFor('8 lines in the new file', () => {
      const l = lines(paths.main);
      return l.length >= 8 ? l : undefined;
    });
    assert.equal(fresh.filter((l) => l.includes('"req-rotated-')).length, 8);
    assert.ok(lines(`${paths.main}.1`).some((l) => l.includes('"req-before-rotate"')));
    assert.ok(!lines(`${paths.main}.1`).some((l) => l.includes('"req-rotated-')));
  });

  it("print each request's own connection's addresses, request after request on keep-alive connections", async () => {
    // Two connections, two requests on each: each line must name the client end of its own connection.
    const agents = [new Agent({ keepAlive: true, maxSockets: 1 }), new Agent({ keepAlive: true, maxSockets: 1 })];
    const sent: { id: string; clientPort: number }[] = [];
    for (let round = 0; round < 2; round++) {
      for (const [i, agent] of agents.entries()) {
        const id = `req-addr-${i}-${round}`;
        const clientPort = await new Promise<number>((resolve, reject) => {
          request(`${base()}/api/`, { agent, headers: { 'x-request-id': id } }, (res) => {
            const port = res.socket.localPort!;
            res.resume().on('end', () => resolve(port));
          }).on('error', reject).end();
        });
        sent.push({ id, clientPort });
      }
    }
    for (const agent of agents) agent.destroy();
    assert.equal(new Set(sent.map((s) => s.clientPort)).size, 2, 'two connections, each kept for both its requests');
    const logged = await waitFor('four address lines', () => {
      const l = lines(paths.addresses).filter((x) => x.startsWith('req-addr-'));
      return l.length >= 4 ? l : undefined;
    });
    for (const { id, clientPort } of sent) assert.ok(logged.includes(`${id} 127.0.0.1:${clientPort} 127.0.0.1:${proxy.ports.get('http')}`), `${id} from port ${clientPort}: ${logged.join(' | ')}`);
  });

  it('GET on /reopen_logs is refused and changes nothing', async () => {
    assert.equal((await httpRequest(`http://${proxy.admin}/reopen_logs`)).status, 400);
  });
});

describe('TCP proxy access logs', () => {
  it('write one line per connection, with bytes both ways and the upstream host', async () => {
    const socket = connect(proxy.ports.get('tcp')!, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('ping!');
    await new Promise((resolve) => socket.once('data', resolve));
    socket.end();
    await new Promise((resolve) => socket.once('close', resolve));
    const line = await waitFor('the TCP access log line', () => lines(paths.tcp)[0]);
    assert.equal(line, `127.0.0.1:${echo.port} 5 5 -`);
  });
});

describe('listener access logs', () => {
  it('logs a connection no filter chain takes, with NR, as Envoy does', async () => {
    await new Promise<void>((resolve) => {
      const socket = connect(proxy.ports.get('strict')!, '127.0.0.1');
      socket.on('close', () => resolve());
      socket.on('error', () => undefined);
    });
    assert.equal(await waitFor('the listener\'s line', () => lines(paths.listener)[0]), 'NR 127.0.0.1');
  });
});

describe('admin access logs', () => {
  it('take access_log lists with formats, like listeners', async () => {
    await httpRequest(`http://${proxy.admin}/server_info?probe=1`);
    const line = await waitFor('the admin access log line', () => lines(paths.admin).find((l) => l.startsWith('GET /server_info?probe=1')));
    assert.equal(line, 'GET /server_info?probe=1 200');
  });
});

describe('access log start-up checks', () => {
  it('refuse to start when an access log file cannot be opened, naming it', async () => {
    const d = minimalBootstrap() as Record<string, any>;
    d.admin.address.socket_address.port_value = 0;
    d.static_resources.listeners[0].address.socket_address.port_value = 0;
    d.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.access_log = [
      { name: 'f', typed_config: { '@type': FILE_LOG, path: `${tmp.dir}/no/such/dir/access.log` } },
    ];
    const r = await runProxy(['--use-dynamic-base-id', '-c', tmp.file('bad-path.json', JSON.stringify(d))]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /unable to open access log file '.*\/no\/such\/dir\/access\.log': ENOENT/);
  });
});
