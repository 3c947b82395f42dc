import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { filterBootstrap } from './helpers/bootstraps.js';
import { runProxy, tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, waitFor, type RunningProxy } from './helpers/proxy.js';
import { startUpstream, type Upstream } from './helpers/upstream.js';

/** The header_to_metadata filter as Envoy's: headers and cookies to dynamic metadata, seen in the access log. */

const H2M = 'type.googleapis.com/envoy.extensions.filters.http.header_to_metadata.v3.Config';
const tmp = tempDir();
const logPath = join(tmp.dir, 'access.log');
let upstream: Upstream;
let proxy: RunningProxy;

before(async () => {
  upstream = await startUpstream('A');
  const filter = {
    name: 'envoy.filters.http.header_to_metadata',
    typed_config: {
      '@type': H2M,
      request_rules: [
        { header: 'x-version', on_header_present: { metadata_namespace: 'envoy.lb', key: 'version' }, on_header_missing: { metadata_namespace: 'envoy.lb', key: 'version', value: 'none' }, remove: true },
        { header: 'x-weight', on_header_present: { key: 'weight', type: 'NUMBER' } },
        { header: 'x-tenant', on_header_present: { key: 'tenant', regex_value_rewrite: { pattern: { regex: '^tenant-(.*)$' }, substitution: '\\1' } } },
        { cookie: 'session', on_header_present: { key: 'session' } },
        { header: 'x-b64', on_header_present: { key: 'decoded', encode: 'BASE64' } },
      ],
      response_rules: [{ header: 'x-upstream-flag', on_header_present: { key: 'flag' }, remove: true }],
    },
  };
  const direct = { match: { prefix: '/direct' }, direct_response: { status: 200, body: { inline_string: 'direct' } }, response_headers_to_add: [{ header: { key: 'x-upstream-flag', value: 'raised' } }] };
  const bootstrap = filterBootstrap('h2m', [filter], [direct, { match: { prefix: '/' }, route: { cluster: 'backend', regex_rewrite: { pattern: { regex: '^/.*$' }, substitution: '/echo' } } }], upstream.port);
  const hcm = (bootstrap.static_resources as any).listeners[0].filter_chains[0].filters[0].typed_config;
  hcm.access_log = [
    {
      name: 'envoy.access_loggers.file',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog',
        path: logPath,
        log_format: { text_format_source: { inline_string: '%REQ(X-REQUEST-ID)% %DYNAMIC_METADATA(envoy.lb:version)% %DYNAMIC_METADATA(envoy.filters.http.header_to_metadata)%\n' } },
      },
    },
  ];
  proxy = await startProxy(bootstrap, ['--concurrency', '1', '--file-flush-interval-msec', '50']);
});

after(async () => {
  await stopAllProxies();
  await upstream.close();
  tmp.cleanup();
});

const line = (id: string) => waitFor(`the access log line of ${id}`, () => (existsSync(logPath) ? readFileSync(logPath, 'utf8').split('\n').find((l) => l.startsWith(`${id} `)) : undefined));
const get = (headers: Record<string, string>) => httpRequest(`http://127.0.0.1:${proxy.ports.get('h2m')}/`, { headers });

describe('the header_to_metadata filter', () => {
  it('writes headers and cookies to dynamic metadata as the rules say: typed, rewritten, decoded, and removes what it is told to', async () => {
    const r = await get({ 'x-request-id': 'one', 'x-version': 'v2', 'x-weight': '7', 'x-tenant': 'tenant-acme', cookie: 'a=b; session=s3', 'x-b64': Buffer.from('hi there').toString('base64') });
    const echoed = JSON.parse(r.body) as { headers: Record<string, string> };
    assert.equal(echoed.headers['x-version'], undefined, 'removed before going upstream');
    assert.equal(echoed.headers['x-weight'], '7');
    assert.equal(await line('one'), 'one v2 {"weight":7,"tenant":"acme","session":"s3","decoded":"hi there"}');
  });

  it('writes on_header_missing\'s value when the header is absent, and skips values that are not numbers', async () => {
    await get({ 'x-request-id': 'two', 'x-weight': 'heavy' });
    assert.equal(await line('two'), 'two none -');
  });
});

describe('header_to_metadata on responses', () => {
  it("reads the response's headers too, and removes them before the client sees them", async () => {
    const r = await httpRequest(`http://127.0.0.1:${proxy.ports.get('h2m')}/direct`, { headers: { 'x-request-id': 'three' } });
    assert.deepEqual([r.body, r.headers['x-upstream-flag']], ['direct', undefined]);
    assert.equal(await line('three'), 'three none {"flag":"raised"}');
  });
});

describe('header_to_metadata configuration', () => {
  it("refuses rules Envoy refuses, and PROTOBUF_VALUE by name", async () => {
    const filter = {
      name: 'envoy.filters.http.header_to_metadata',
      typed_config: { '@type': H2M, request_rules: [{ header: 'a', cookie: 'b', on_header_present: { key: 'k', type: 'PROTOBUF_VALUE' } }, { header: 'c', on_header_missing: { key: 'k' } }] },
    };
    const out = await runProxy(['--mode', 'validate', '-c', tmp.file('bad-h2m.json', JSON.stringify(filterBootstrap('bad', [filter], [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], 1)))]);
    assert.equal(out.code, 1);
    const text = out.stderr + out.stdout;
    assert.match(text, /request_rules\[0\]: one of header and cookie must be set/);
    assert.match(text, /request_rules\[0\]\.on_header_present\.type: PROTOBUF_VALUE is not supported/);
    assert.match(text, /request_rules\[1\]\.on_header_missing: cannot be used without a non-empty value/);
  });
});
