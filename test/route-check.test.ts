import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { dump } from 'js-yaml';
import { runProxy, tempDir } from './helpers/cli.js';
import { CASES, CLUSTERS, ROUTES, type CheckCase } from './helpers/route-check-cases.js';
import { hcmFilter, staticCluster } from './helpers/bootstraps.js';
import { toolType } from '../route-check/schema.js';

/**
 * `proxy route-check`, run as Envoy's route_tests.sh runs router_check_tool: the same options,
 * files, lines on stdout and stderr, and exit status.
 */

const tmp = tempDir('route-check-');
after(() => tmp.cleanup());

const routesYaml = tmp.file('routes.yaml', dump(ROUTES));
const testsJson = tmp.file('tests.json', JSON.stringify({ tests: CASES }, null, 1));
const check = (...args: string[]) => runProxy(['route-check', ...args]);

/** One failing test among passing ones (a copy of CASES with one expectation changed). */
function withFailure(): CheckCase[] {
  const cases = structuredClone(CASES);
  cases[9]!.validate = { cluster_name: 'shop-a', virtual_host_name: 'shop' };
  return cases;
}

describe('proxy route-check', () => {
  // Every route has a test but api's last; the require_tls redirect is an entry of its own (Envoy's tool counts the one redirect route all virtual hosts share).
  it('passes tests written for Envoy and prints the coverage (0)', async () => {
    const r = await check('-c', routesYaml, '-t', testsJson, '--details');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), [...CASES.map((c) => c.test_name), 'Current route coverage: 100%']);
    assert.equal(r.stderr, '');
  });

  it('reads a test file in YAML, in text protobuf, and JSON with a trailing comma', async () => {
    const yaml = tmp.file('tests.yaml', dump({ tests: CASES.slice(0, 3) }));
    const text = tmp.file('tests.pb_text', 'tests {\n  test_name: "www"\n  input { authority: "www.example.com" path: "/" method: "GET" ssl: true }\n  validate { cluster_name { value: "www" } }\n}\n');
    const comma = tmp.file('comma.json', '{ "tests": [ { "test_name": "www", "input": { "authority": "www.example.com", "path": "/", "method": "GET", "ssl": true }, "validate": { "cluster_name": "www" } }, ] }');
    for (const file of [yaml, text, comma]) {
      const r = await check('--config-path', routesYaml, '--test-path', file);
      assert.equal(r.code, 0, `${file}: ${r.stderr}`);
      assert.match(r.stdout, /^Current route coverage: /m);
    }
  });

  it('words failures as Envoy does, on stderr, and exits 1', async () => {
    const failing = tmp.file('failing.json', JSON.stringify({ tests: withFailure() }));
    const details = await check('-c', routesYaml, '-t', failing, '--details');
    assert.equal(details.code, 1);
    assert.equal(details.stderr, `split second\nexpected: [shop-a], actual: [shop-b], test type: cluster_name\nexpected: [shop], actual: [default], test type: virtual_host_name\n`);
    assert.ok(details.stdout.includes('split first\n'), 'passing tests are named on stdout');
    assert.doesNotMatch(details.stdout, /coverage/, 'no coverage once a test fails');
    const only = await check('-c', routesYaml, '-t', failing, '--only-show-failures');
    assert.equal(only.code, 1);
    assert.equal(only.stdout, '');
    assert.match(only.stderr, /^split second\nexpected: \[shop-a\]/);
    const quiet = await check('-c', routesYaml, '-t', failing);
    assert.deepEqual([quiet.code, quiet.stdout, quiet.stderr], [1, '', '']);
  });

  it("prints header matchers' failures in Envoy's forms", async () => {
    const tests = tmp.file('headers.yaml', dump({
      tests: [{
        test_name: 'ping headers',
        input: { authority: 'shop.example.com', path: '/ping', method: 'GET' },
        validate: {
          response_header_matches: [
            { name: 'content-type', string_match: { exact: 'text/plain' }, invert_match: true },
            { name: 'content-length', range_match: { start: 100, end: 200 } },
            { name: 'x-served-by', string_match: { exact: 'other' } },
            { name: 'x-served-by', present_match: true, invert_match: true },
            { name: 'x-absent', present_match: true },
            { name: 'x-absent', string_match: { prefix: 'a' } },
          ],
        },
      }],
    }));
    const out = tmp.file('results.pb', '');
    const r = await check('-c', routesYaml, '-t', tests, '--only-show-failures', '-o', out);
    assert.equal(r.code, 1);
    assert.deepEqual(r.stderr.trim().split('\n'), [
      'ping headers',
      'expected: [content-type: text/plain], actual: NOT [content-type: text/plain], test type: response_header_matches.string_match.exact',
      'actual: [content-length: 4], test type: response_header_matches.range_match',
      'expected: [x-served-by: other], actual: [x-served-by: default], test type: response_header_matches.string_match.exact',
      'expected: [has(x-served-by):false], actual: [has(x-served-by):true], test type: response_header_matches.present_match',
      'expected: [has(x-absent):true], actual: [has(x-absent):false], test type: response_header_matches.present_match',
      'actual: [x-absent: NULL], test type: response_header_matches.string_match.prefix',
    ]);
    // --output-path: the binary ValidationResult, as Envoy's tool writes it.
    const type = toolType('ValidationResult');
    const result = type.toObject(type.decode(readFileSync(out)), { longs: String }) as { test_results: { test_name: string; test_passed: boolean; failure: { response_header_match_failures: { actual_header_value: { value: string } }[] } }[] };
    assert.equal(result.test_results.length, 1);
    assert.equal(result.test_results[0]!.test_passed, false);
    assert.deepEqual(result.test_results[0]!.failure.response_header_match_failures.map((f) => f.actual_header_value.value), ['text/plain', '4', 'default', 'default', '', '']);
  });

  it('reports coverage: --fail-under, --covall and --detailed-coverage', async () => {
    const some = tmp.file('some.json', JSON.stringify({ tests: CASES.slice(0, 4) }));
    const under = await check('-c', routesYaml, '-t', some, '-f', '100');
    assert.equal(under.code, 1);
    assert.match(under.stdout, /^Current route coverage: 21\.4286%$/m);
    assert.equal(under.stderr, 'Failed to meet coverage requirement: 100%\n');
    const covall = await check('-c', routesYaml, '-t', some, '--covall');
    assert.equal(covall.code, 0);
    assert.ok(covall.stdout.includes('Missing test for host: default, route: path: "/Legacy"\ncase_sensitive {\n  value: false\n}\nheaders {\n  name: "x-old"\n  present_match: true\n}\n\n'), covall.stdout);
    const detailed = await check('-c', routesYaml, '-t', some, '--detailed-coverage');
    assert.match(detailed.stdout, /^Missing test for host: default, route name: canary-[0-9a-f-]{36}$/m);
    assert.match(detailed.stdout, /^Missing test for host: api, route name: -[0-9a-f-]{36}$/m, 'an unnamed route');
    const plain = await check('-c', routesYaml, '-t', some);
    assert.doesNotMatch(plain.stdout, /Missing test/);
  });

  it('takes a bootstrap and a listener name', async () => {
    const bootstrap = tmp.file('bootstrap.yaml', dump({
      static_resources: {
        listeners: [{ name: 'main', address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [{ ...hcmFilter('main', []), typed_config: { ...(hcmFilter('main', []).typed_config as object), route_config: ROUTES } }] }] }],
        clusters: CLUSTERS.map((c) => staticCluster(c, 1)),
      },
    }));
    const r = await check('-c', bootstrap, '-l', 'main', '-t', testsJson);
    assert.equal(r.code, 0, r.stderr);
    const unnamed = await check('-c', bootstrap, '-t', testsJson);
    assert.equal(unnamed.code, 1);
    assert.match(unnamed.stderr, /is a bootstrap: name the listener whose routes to test with --listener-name\/-l/);
    const wrong = await check('-c', bootstrap, '-l', 'other', '-t', testsJson);
    assert.match(wrong.stderr, /no listener named 'other' \(the bootstrap has 'main'\)/);
  });

  it('refuses what it cannot run, by name, with exit 1', async () => {
    const missing = await check('-c', routesYaml);
    assert.deepEqual([missing.code, missing.stderr], [1, 'error: Both --config-path/c and --test-path/t are mandatory\n']);
    // A test file given as the route configuration: Envoy's loader error, which scripts match.
    const swapped = await check('-c', testsJson, '-t', routesYaml);
    assert.equal(swapped.code, 1);
    assert.match(swapped.stderr, /INVALID_ARGUMENT.*envoy\.config\.route\.v3\.RouteConfiguration.*tests/);
    const unknownFlag = await check('-c', routesYaml, '-t', testsJson, '--useproto');
    assert.equal(unknownFlag.code, 1);
    assert.match(unknownFlag.stderr, /--useproto/);
    // A field this proxy does not implement is refused by name, never ignored.
    const vc = tmp.file('vc.yaml', dump({ virtual_hosts: [{ name: 'v', domains: ['*'], virtual_clusters: [{ name: 'c', headers: [{ name: ':path', string_match: { prefix: '/' } }] }], routes: [] }] }));
    const refused = await check('-c', vc, '-t', testsJson);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /virtual_clusters/);
    const noMethod = tmp.file('no-method.json', JSON.stringify({ tests: [{ test_name: 'x', input: { authority: 'a', path: '/' }, validate: {} }] }));
    const invalid = await check('-c', routesYaml, '-t', noMethod);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /method/);
  });
});
