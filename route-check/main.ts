import { writeFileSync } from 'node:fs';
import { list, obj } from '../shared/config/access.js';
import type { JsonObject } from '../shared/config/proto-json.js';
import { RouteTable } from '../shared/http/route-table.js';
import { setRuntime } from '../shared/runtime.js';
import { Coverage, formatG } from './coverage.js';
import { readMessageFile, readRouteConfig, ToolError } from './load.js';
import { RouteChecker, type TestResult } from './run.js';
import { toolSchema, toolType } from './schema.js';

/**
 * `proxy route-check`: Envoy's router_check_tool, on this proxy's route table. It takes the same
 * options, route configurations (or a bootstrap and a listener name) and test files, prints the
 * same lines and exits as it does: 0 when every test passes (and the coverage is met), 1 otherwise.
 */

interface Options {
  configPath: string;
  testPath: string;
  listenerName: string;
  details: boolean;
  onlyShowFailures: boolean;
  disableDeprecationCheck: boolean;
  failUnder: number;
  comprehensive: boolean;
  outputPath: string;
  detailedCoverage: boolean;
}

const SWITCHES: Record<string, keyof Options> = {
  '-d': 'details',
  '--details': 'details',
  '--only-show-failures': 'onlyShowFailures',
  '--disable-deprecation-check': 'disableDeprecationCheck',
  '--covall': 'comprehensive',
  '--detailed-coverage': 'detailedCoverage',
};
const VALUES: Record<string, keyof Options> = {
  '-c': 'configPath',
  '--config-path': 'configPath',
  '-t': 'testPath',
  '--test-path': 'testPath',
  '-l': 'listenerName',
  '--listener-name': 'listenerName',
  '-f': 'failUnder',
  '--fail-under': 'failUnder',
  '-o': 'outputPath',
  '--output-path': 'outputPath',
};

const USAGE = `usage: proxy route-check -c <route configuration or bootstrap> -t <tests> [options]

  -c, --config-path <file>      the RouteConfiguration (YAML, JSON, .pb_text or .pb), or a bootstrap with -l
  -t, --test-path <file>        the tests, in Envoy's router_check_tool format
  -l, --listener-name <name>    with a bootstrap: the listener whose connection manager's route_config to test
  -d, --details                 print every test's name, and why each failing test failed
      --only-show-failures      print failing tests only (and write only them with -o)
      --disable-deprecation-check  do not warn of deprecated fields in the route configuration
  -f, --fail-under <percent>    fail when the route coverage is below this
      --covall                  count coverage by every checked field of each route
      --detailed-coverage       list the routes no test covers
  -o, --output-path <file>      write the results, a binary ValidationResult
  -h, --help                    this text
`;

class UsageError extends Error {}

function parseOptions(argv: string[]): Options | 'help' {
  const o: Options = { configPath: '', testPath: '', listenerName: '', details: false, onlyShowFailures: false, disableDeprecationCheck: false, failUnder: 0, comprehensive: false, outputPath: '', detailedCoverage: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') return 'help';
    if (arg === '--') break;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (SWITCHES[flag] && eq < 0) {
      (o as unknown as Record<string, boolean>)[SWITCHES[flag]] = true;
    } else if (VALUES[flag]) {
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new UsageError(`Missing a value for this argument! (${flag})`);
      if (VALUES[flag] === 'failUnder') {
        const n = Number(value);
        if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`Couldn't read argument value from string '${value}' (${flag})`);
        o.failUnder = n;
      } else (o as unknown as Record<string, string>)[VALUES[flag]] = value;
    } else if (arg.startsWith('-') && arg !== '-') {
      throw new UsageError(`Argument: ${arg}\n             Couldn't find match for argument`);
    }
    // A bare argument is accepted and left alone, as the tool's unlabelled arguments are.
  }
  return o;
}

export async function main(argv: string[]): Promise<number> {
  let options: Options | 'help';
  try {
    options = parseOptions(argv);
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n\n${USAGE}`);
    return 1;
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (!options.configPath || !options.testPath) {
    process.stderr.write('error: Both --config-path/c and --test-path/t are mandatory\n');
    return 1;
  }
  try {
    return check(options);
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 1;
  }
}

function check(o: Options): number {
  const root = toolSchema();
  const routes = readRouteConfig(o.configPath, root, o.listenerName);
  const tests = readMessageFile(o.testPath, root, toolType('Validation'));
  if (!o.disableDeprecationCheck) for (const d of [...routes.deprecated]) process.stderr.write(`warning: ${o.configPath}: ${d}\n`);
  if (tests.message.runtime !== undefined) setRuntime({ layers: ['tests'], entries: flatten(obj(tests.message.runtime)) });
  const table = new RouteTable(withRuntimeFractionsOn(routes.message));
  const coverage = new Coverage(table);
  const checker = new RouteChecker(table, coverage);
  const results: TestResult[] = list(tests.message.tests).map((t) => checker.run(t));
  for (const r of results) {
    if (!((o.details && !o.onlyShowFailures) || (o.onlyShowFailures && !r.passed))) continue;
    if (r.passed) process.stdout.write(`${r.name}\n`);
    else process.stderr.write(`${r.name}\n${r.lines.map((l) => `${l}\n`).join('')}`);
  }
  const kept = o.onlyShowFailures ? results.filter((r) => !r.passed) : results;
  if (o.outputPath) writeResults(o.outputPath, kept);
  if (results.some((r) => !r.passed)) return 1;
  if (o.comprehensive || o.detailedCoverage) for (const line of coverage.missing(o.comprehensive, root.lookupType('envoy.config.route.v3.RouteMatch'))) process.stdout.write(`${line}\n`);
  const percent = coverage.percent(o.comprehensive);
  process.stdout.write(`Current route coverage: ${formatG(percent)}%\n`);
  if (o.failUnder !== 0 && percent < o.failUnder) {
    process.stderr.write(`Failed to meet coverage requirement: ${formatG(o.failUnder)}%\n`);
    return 1;
  }
  return 0;
}

/**
 * As Envoy's tool: a runtime_fraction of 0 becomes 1, so that a test can turn the route on (its
 * runtime key and random value 0) or leave it off.
 */
function withRuntimeFractionsOn(config: JsonObject): JsonObject {
  const copy = structuredClone(config);
  for (const vh of list(copy.virtual_hosts)) {
    for (const r of list(vh.routes)) {
      const fraction = obj(obj(r.match).runtime_fraction);
      const value = obj(fraction.default_value);
      if (obj(r.match).runtime_fraction !== undefined && Number(value.numerator ?? 0) === 0) fraction.default_value = { ...value, numerator: 1 };
    }
  }
  return copy;
}

/** A static runtime layer's Struct as the runtime's keys (nested keys joined with dots). */
function flatten(struct: JsonObject, prefix = '', out: Record<string, string[]> = {}): Record<string, string[]> {
  for (const [k, v] of Object.entries(struct)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v as JsonObject, key, out);
    else out[key] = [String(v)];
  }
  return out;
}

function writeResults(path: string, results: TestResult[]): void {
  const type = toolType('ValidationResult');
  const message = type.fromObject({
    test_results: results.map((r) => ({ test_name: r.name, test_passed: r.passed, ...(r.failure ? { failure: wrapped(r.failure) } : {}) })),
  });
  writeFileSync(path, type.encode(message).finish());
}

/** ValidationFailure's canonical JSON as protobufjs objects: wrappers as `{ value }`. */
function wrapped(failure: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(failure)) {
    if (Array.isArray(v)) out[k] = v.map((f) => ({ header_matcher: obj(f).header_matcher, actual_header_value: { value: obj(f).actual_header_value } }));
    else out[k] = { value: v };
  }
  return out;
}
