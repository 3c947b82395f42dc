import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import { NO_REQUEST, ResponseFlag, responseFlagsText, type AccessLogEntry } from '../shared/access-log/entry.js';
import { compileAccessLogFilter } from '../shared/access-log/filter.js';
import { compileAccessLogFormat, compileJsonFormat, compileTextFormat, DEFAULT_FORMAT, isoTime } from '../shared/access-log/format.js';
import { setRuntime } from '../shared/runtime.js';

// 2026-03-04T05:06:07.089Z
const start = Date.UTC(2026, 2, 4, 5, 6, 7, 89);

function entry(over: Partial<AccessLogEntry> = {}): AccessLogEntry {
  const responseHeaders: Record<string, string> = { 'x-envoy-upstream-service-time': '12', 'content-type': 'text/plain' };
  return {
    startTime: start,
    protocol: 'HTTP/1.1',
    request: {
      method: 'GET',
      path: '/api/users?id=7',
      authority: 'example.com',
      headers: { 'user-agent': 'curl/8.5.0', 'x-request-id': 'c0ffee00-0000-4000-8000-000000000001', 'x-forwarded-for': '10.0.0.1', 'x-multi': ['a', 'b'] },
    },
    responseHeader: (name) => responseHeaders[name],
    responseCode: 200,
    responseFlags: 0,
    bytesReceived: 5,
    bytesSent: 1234,
    requestDurationMs: 1,
    responseDurationMs: 14,
    durationMs: 17,
    upstreamHost: '127.0.0.1:8080',
    upstreamCluster: 'backend',
    attemptCount: 1,
    downstreamRemoteAddress: '127.0.0.1:52000',
    downstreamLocalAddress: '127.0.0.1:10000',
    healthCheck: false,
    ...over,
  };
}

describe('access log text formats', () => {
  it("the default format is Envoy's", () => {
    assert.equal(
      compileTextFormat(DEFAULT_FORMAT).format(entry()),
      '[2026-03-04T05:06:07.089Z] "GET /api/users?id=7 HTTP/1.1" 200 - 5 1234 17 12 "10.0.0.1" "curl/8.5.0" ' +
        '"c0ffee00-0000-4000-8000-000000000001" "example.com" "127.0.0.1:8080"\n',
    );
  });

  it('literal text is printed as written, whatever it holds (the format is compiled into a function)', () => {
    // Text that would end or escape a string, a template or a comment if it were written into code.
    const text = "`${x}` \\ ' \" */ /* \u2028\u2029 </script>";
    assert.equal(compileTextFormat(`${text}%RESPONSE_CODE%${text}%PROTOCOL%${text}\n`).format(entry()), `${text}200${text}HTTP/1.1${text}\n`);
  });

  it('a format of many commands prints each in its place', () => {
    const format = Array.from({ length: 3000 }, (_, i) => `${i}:%RESPONSE_CODE%`).join(' ');
    const printed = compileTextFormat(format).format(entry({ responseCode: 204 }));
    assert.equal(printed, Array.from({ length: 3000 }, (_, i) => `${i}:204`).join(' '));
  });

  it('a FileAccessLog without a format uses the default, and an empty format too', () => {
    const line = compileTextFormat(DEFAULT_FORMAT).format(entry());
    assert.equal(compileAccessLogFormat({ path: '/dev/null' }).format(entry()), line);
    assert.equal(compileAccessLogFormat({ path: '/dev/null', format: '' }).format(entry()), line);
  });

  it('absent values print "-", or nothing with omit_empty_values', () => {
    const e = entry({ upstreamHost: undefined, durationMs: undefined });
    assert.equal(compileTextFormat('%UPSTREAM_HOST% %DURATION% %REQ(X-NONE)%').format(e), '- - -');
    assert.equal(compileAccessLogFormat({ log_format: { text_format: '[%UPSTREAM_HOST%]', omit_empty_values: true } }).format(e), '[]');
  });

  it('REQ and RESP: case-insensitive names, an alternative header, truncation, pseudo-headers', () => {
    const f = (s: string, e = entry()) => compileTextFormat(s).format(e);
    assert.equal(f('%REQ(User-Agent)%'), 'curl/8.5.0');
    assert.equal(f('%REQ(X-MISSING?USER-AGENT)%'), 'curl/8.5.0');
    assert.equal(f('%REQ(USER-AGENT):4%'), 'curl');
    assert.equal(f('%REQ(:METHOD)% %REQ(:PATH)% %REQ(:AUTHORITY)% %REQ(:SCHEME)%'), 'GET /api/users?id=7 example.com http');
    assert.equal(f('%RESP(CONTENT-TYPE)%'), 'text/plain');
    assert.equal(f('%REQ(X-MULTI)%'), 'a,b');
  });

  it('after a prefix rewrite :PATH is the new path and X-ENVOY-ORIGINAL-PATH the one the client sent', () => {
    const e = entry({ rewrittenPath: '/users?id=7' });
    assert.equal(compileTextFormat('%REQ(:PATH)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%').format(e), '/users?id=7 /api/users?id=7');
  });

  it('stream info commands', () => {
    const e = entry({ responseFlags: ResponseFlag.upstreamConnectionFailure | ResponseFlag.upstreamRetryLimitExceeded, routeName: 'users' });
    const f = (s: string) => compileTextFormat(s).format(e);
    assert.equal(f('%RESPONSE_FLAGS%'), 'UF,URX');
    assert.equal(f('%PROTOCOL% %RESPONSE_CODE% %BYTES_RECEIVED% %BYTES_SENT%'), 'HTTP/1.1 200 5 1234');
    assert.equal(f('%REQUEST_DURATION% %RESPONSE_DURATION% %RESPONSE_TX_DURATION% %DURATION%'), '1 14 3 17');
    assert.equal(f('%UPSTREAM_CLUSTER% %UPSTREAM_REQUEST_ATTEMPT_COUNT% %ROUTE_NAME%'), 'backend 1 users');
    assert.equal(f('%DOWNSTREAM_REMOTE_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT% %DOWNSTREAM_REMOTE_PORT%'), '127.0.0.1:52000 127.0.0.1 52000');
    assert.equal(f('%DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT%:%DOWNSTREAM_LOCAL_PORT%'), '127.0.0.1:10000');
    assert.equal(compileTextFormat('%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%').format(entry({ downstreamRemoteAddress: '[::1]:4000' })), '::1');
    assert.equal(f('%HOSTNAME%'), hostname());
    assert.equal(f('%REQUESTED_SERVER_NAME%'), '-');
  });

  it('START_TIME with strftime conversions, in UTC', () => {
    const f = (s: string) => compileTextFormat(s).format(entry());
    assert.equal(f('%START_TIME%'), '2026-03-04T05:06:07.089Z');
    assert.equal(f('%START_TIME(%Y/%m/%dT%H:%M:%S%z)%'), '2026/03/04T05:06:07+0000');
    assert.equal(f('%START_TIME(%s)%'), String(Math.floor(start / 1000)));
    assert.equal(f('%START_TIME(%E3S|%E6S|%3f|%f)%'), '07.089|07.089000|089|089000000');
    assert.equal(f('%START_TIME(%a %b %e %T %Y)%'), 'Wed Mar  4 05:06:07 2026');
  });

  it('literal text around commands, and a format with no command at all', () => {
    assert.equal(compileTextFormat('code=%RESPONSE_CODE%;\n').format(entry()), 'code=200;\n');
    assert.equal(compileTextFormat('just text').format(entry()), 'just text');
  });

  it('response flags print in Envoy\'s order', () => {
    assert.equal(responseFlagsText(0), '-');
    assert.equal(responseFlagsText(ResponseFlag.noRouteFound | ResponseFlag.failedLocalHealthCheck), 'LH,NR');
  });

  const refusals: [string, RegExp][] = [
    ['%NOT_A_THING%', /Not supported field in StreamInfo: NOT_A_THING$/],
    ['%START_TIME(%Q)%', /START_TIME: unsupported time format conversion '%Q'/],
    ['100%', /Incorrect configuration: 100%\. Couldn't find valid command at position 3$/],
    ['%REQ(a?b?c)%', /More than 1 alternative header specified in token: REQ\(a\?b\?c\)$/],
    ['%REQ(abc%', /Couldn't find valid command at position 0/],
    ['%TRAILER(grpc-status)%', /%TRAILER% is not supported: response trailers are not forwarded/],
    ['%DYNAMIC_METADATA%', /Not supported field in StreamInfo: DYNAMIC_METADATA$/],
    ['%DYNAMIC_METADATA()%', /DYNAMIC_METADATA needs a namespace/],
    ['%UPSTREAM_HOST(x)%', /Not supported field in StreamInfo: UPSTREAM_HOST\(x\)/],
  ];
  for (const [format, message] of refusals) {
    it(`refuses ${JSON.stringify(format)}`, () => assert.throws(() => compileTextFormat(format), message));
  }

  it('prints dynamic metadata by namespace and key path: strings and numbers as they are, structures as JSON, absent as -', () => {
    const e = entry({ dynamicMetadata: { 'envoy.lb': { version: 'v2', weight: 3, tags: { a: 1 } } } });
    assert.equal(compileTextFormat('%DYNAMIC_METADATA(envoy.lb:version)% %DYNAMIC_METADATA(envoy.lb:weight)% %DYNAMIC_METADATA(envoy.lb:tags)% %DYNAMIC_METADATA(envoy.lb:tags:a)% %DYNAMIC_METADATA(other:x)% %DYNAMIC_METADATA(envoy.lb:version):1%').format(e), 'v2 3 {"a":1} 1 - v');
    assert.equal(compileJsonFormat({ m: '%DYNAMIC_METADATA(envoy.lb)%' }, { typed: true, omitEmptyValues: false, sortProperties: false }).format(e), `${JSON.stringify({ m: { version: 'v2', weight: 3, tags: { a: 1 } } })}\n`);
  });
});

describe("START_TIME's default form", () => {
  it("is Date's toISOString, whatever the second, the millisecond or a fraction of one, in any order", () => {
    const base = Date.UTC(2026, 10, 26, 23, 59, 58);
    const times = [base, base + 0.999, base + 7, base + 42.5, base + 999, base + 1000, base + 1999.9, base + 2000, base + 1, Date.UTC(2027, 0, 1) - 0.5, Date.UTC(2027, 0, 1), 0, 999.99, base + 61_000 + 100];
    for (let i = 0; i < 500; i++) times.push(base + Math.random() * 5000);
    for (const t of times) assert.equal(isoTime(t), new Date(t).toISOString(), String(t));
  });
});

describe('access log JSON formats', () => {
  const struct = { code: '%RESPONSE_CODE%', host: '%UPSTREAM_HOST%', line: '%REQ(:METHOD)% %REQ(:PATH)%', nested: { flags: '%RESPONSE_FLAGS%', list: ['%DURATION%', 'x'] } };

  it('typed: numbers stay numbers, absent values are null, several pieces make a string', () => {
    const out = compileJsonFormat(struct, { typed: true, omitEmptyValues: false, sortProperties: false }).format(entry({ upstreamHost: undefined }));
    assert.ok(out.endsWith('\n'));
    assert.deepEqual(JSON.parse(out), { code: 200, host: null, line: 'GET /api/users?id=7', nested: { flags: '-', list: [17, 'x'] } });
    assert.deepEqual(Object.keys(JSON.parse(out)), ['code', 'host', 'line', 'nested'], 'keys keep the configured order');
  });

  it('json_format (the deprecated FileAccessLog field) prints every value as a string', () => {
    const out = compileAccessLogFormat({ json_format: struct }).format(entry({ upstreamHost: undefined }));
    assert.deepEqual(JSON.parse(out), { code: '200', host: '-', line: 'GET /api/users?id=7', nested: { flags: '-', list: ['17', 'x'] } });
  });

  it('log_format.json_format is typed; omit_empty_values drops absent keys; sort_properties sorts', () => {
    const out = compileAccessLogFormat({ log_format: { json_format: { z: '%UPSTREAM_HOST%', b: '%BYTES_SENT%', a: '%PROTOCOL%' }, omit_empty_values: true, json_format_options: { sort_properties: true } } }).format(
      entry({ upstreamHost: undefined }),
    );
    assert.equal(out, '{"a":"HTTP/1.1","b":1234}\n');
  });

  it('text_format_source reads a data source', () => {
    assert.equal(compileAccessLogFormat({ log_format: { text_format_source: { inline_string: '%RESPONSE_CODE%\n' } } }).format(entry()), '200\n');
  });

  it('refuses values that are not strings, structs or lists, and bad commands inside', () => {
    assert.throws(() => compileJsonFormat({ n: 5 }, { typed: true, omitEmptyValues: false, sortProperties: false }), /json_format\.n: Only string values, nested structs and list values are supported/);
    assert.throws(() => compileJsonFormat({ a: { b: '%NOPE%' } }, { typed: true, omitEmptyValues: false, sortProperties: false }), /Not supported field in StreamInfo: NOPE/);
  });
});

describe('access log filters', () => {
  const cmp = (op: string, value: number, runtime_key?: string) => ({ comparison: { op, value: { default_value: value, ...(runtime_key ? { runtime_key } : {}) } } });

  it('status_code_filter compares with EQ, GE, LE', () => {
    assert.equal(compileAccessLogFilter({ status_code_filter: cmp('GE', 500) })(entry({ responseCode: 503 })), true);
    assert.equal(compileAccessLogFilter({ status_code_filter: cmp('GE', 500) })(entry({ responseCode: 404 })), false);
    assert.equal(compileAccessLogFilter({ status_code_filter: cmp('LE', 299) })(entry({ responseCode: 200 })), true);
    assert.equal(compileAccessLogFilter({ status_code_filter: cmp('EQ', 404) })(entry({ responseCode: 404 })), true);
  });

  it('a comparison value follows its runtime key when the runtime sets one', () => {
    const f = compileAccessLogFilter({ duration_filter: cmp('GE', 1000, 'log.min_ms') });
    assert.equal(f(entry({ durationMs: 17 })), false);
    setRuntime({ layers: ['admin'], entries: { 'log.min_ms': ['10'] } });
    try {
      assert.equal(f(entry({ durationMs: 17 })), true);
    } finally {
      setRuntime({ layers: [], entries: {} });
    }
  });

  it('not_health_check_filter, and/or, headers, response flags', () => {
    assert.equal(compileAccessLogFilter({ not_health_check_filter: {} })(entry({ healthCheck: true })), false);
    const and = compileAccessLogFilter({ and_filter: { filters: [{ status_code_filter: cmp('GE', 200) }, { status_code_filter: cmp('LE', 299) }] } });
    assert.equal(and(entry()), true);
    assert.equal(and(entry({ responseCode: 500 })), false);
    const or = compileAccessLogFilter({ or_filter: { filters: [{ status_code_filter: cmp('EQ', 404) }, { response_flag_filter: { flags: ['UF'] } }] } });
    assert.equal(or(entry({ responseCode: 503, responseFlags: ResponseFlag.upstreamConnectionFailure })), true);
    assert.equal(or(entry({ responseCode: 503, responseFlags: ResponseFlag.upstreamRequestTimeout })), false);
    assert.equal(compileAccessLogFilter({ response_flag_filter: {} })(entry({ responseFlags: ResponseFlag.noRouteFound })), true);
    assert.equal(compileAccessLogFilter({ response_flag_filter: {} })(entry()), false);
    const header = compileAccessLogFilter({ header_filter: { header: { name: 'user-agent', string_match: { prefix: 'curl/' } } } });
    assert.equal(header(entry()), true);
    assert.equal(header(entry({ request: NO_REQUEST })), false);
  });

  it('runtime_filter samples by percentage, the same way for the same request id', () => {
    const all = compileAccessLogFilter({ runtime_filter: { runtime_key: 'log.sample', percent_sampled: { numerator: 100 } } });
    const none = compileAccessLogFilter({ runtime_filter: { runtime_key: 'log.sample', percent_sampled: { numerator: 0 } } });
    assert.equal(all(entry()), true);
    assert.equal(none(entry()), false);
    const half = compileAccessLogFilter({ runtime_filter: { runtime_key: 'log.sample', percent_sampled: { numerator: 50 } } });
    const first = half(entry());
    for (let i = 0; i < 10; i++) assert.equal(half(entry()), first);
  });
});
