import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpus } from 'node:os';
import { DEFAULT_LOG_FORMAT } from '../shared/log/format.js';
import { Level } from '../shared/log/levels.js';
import { DEFAULT_SOCKET_PATH, OPTION_SPECS, helpText, parseOptions, type OptionErrorCode, type Options, type ParseOutcome } from '../supervisor/options.js';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { proxyCommand, runProxy, tempDir } from './helpers/cli.js';

const environment = (env: NodeJS.ProcessEnv = {}) => ({
  argv0: 'proxy',
  env,
  version: () => 'abc/1.0.0/Clean/RELEASE/OpenSSL',
  hotRestartVersion: (disabled: boolean) => (disabled ? 'disabled' : '1.32'),
});

function run(args: string[], env: NodeJS.ProcessEnv = {}): Options {
  const out = parseOptions(args, environment(env));
  assert.equal(out.kind, 'run', out.kind === 'exit' ? out.stderr : '');
  return (out as Extract<ParseOutcome, { kind: 'run' }>).options;
}

function fail(args: string[], env: NodeJS.ProcessEnv = {}): Extract<ParseOutcome, { kind: 'exit' }> {
  const out = parseOptions(args, environment(env));
  assert.equal(out.kind, 'exit', `expected ${args.join(' ')} to be refused`);
  return out as Extract<ParseOutcome, { kind: 'exit' }>;
}

interface Row {
  option: string;
  field: keyof Options;
  default: unknown;
  valid: [string[], unknown];
  /** Arguments that must be refused, why (the code, and the option it names when not this row's), and a piece of Envoy's message, which wrapper scripts read. */
  invalid: [string[], OptionErrorCode, string, string?];
}

// One row per option of seed §2.9: its default, one valid value, one invalid value and its message.
// Paths here are only parsed, never opened.
const ROWS: Row[] = [
  { option: 'config-path', field: 'configPath', default: '', valid: [['-c', 'x.yaml'], 'x.yaml'], invalid: [['-c'], 'missing_value', 'Missing a value for this argument!'] },
  { option: 'config-yaml', field: 'configYaml', default: '', valid: [['--config-yaml', 'admin: {}'], 'admin: {}'], invalid: [['--config-yaml', 'a', '--config-yaml', 'b'], 'repeated_option', 'Argument already set!'] },
  { option: 'bootstrap-version', field: 'bootstrapVersion', default: undefined, valid: [['--bootstrap-version', '2'], 2], invalid: [['--bootstrap-version', 'three'], 'invalid_value', "Couldn't read argument value from string 'three'"] },
  { option: 'mode', field: 'mode', default: 'serve', valid: [['--mode', 'validate'], 'validate'], invalid: [['--mode', 'bogus'], 'invalid_value', "error: unknown mode 'bogus'"] },
  { option: 'admin-address-path', field: 'adminAddressPath', default: '', valid: [['--admin-address-path', '/run/proxy/admin-address'], '/run/proxy/admin-address'], invalid: [['--admin-address-path'], 'missing_value', 'Missing a value'] },
  { option: 'local-address-ip-version', field: 'localAddressIpVersion', default: 'v4', valid: [['--local-address-ip-version', 'v6'], 'v6'], invalid: [['--local-address-ip-version', 'v5'], 'invalid_value', "error: unknown IP address version 'v5'"] },
  { option: 'base-id', field: 'baseId', default: 0, valid: [['--base-id', '7'], 7], invalid: [['--base-id', '-1'], 'invalid_value', "Couldn't read argument value from string '-1'"] },
  { option: 'use-dynamic-base-id', field: 'useDynamicBaseId', default: false, valid: [['--use-dynamic-base-id'], true], invalid: [['--use-dynamic-base-id', '--restart-epoch', '1'], 'conflict', 'error: cannot use --restart-epoch=1 with --use-dynamic-base-id'] },
  { option: 'base-id-path', field: 'baseIdPath', default: '', valid: [['--base-id-path', '/run/proxy/base-id'], '/run/proxy/base-id'], invalid: [['--base-id-path'], 'missing_value', 'Missing a value'] },
  { option: 'concurrency', field: 'concurrency', default: cpus().length, valid: [['--concurrency', '3'], 3], invalid: [['--concurrency', '1.5'], 'invalid_value', "Couldn't read argument value from string '1.5'"] },
  { option: 'cpuset-threads', field: 'cpusetThreads', default: false, valid: [['--cpuset-threads'], true], invalid: [['--cpuset-threads=yes'], 'unexpected_value', 'does not take a value'] },
  { option: 'log-level', field: 'logLevel', default: Level.info, valid: [['-l', 'warn'], Level.warning], invalid: [['-l', 'loud'], 'invalid_value', "error: invalid log level specified 'loud'"] },
  { option: 'component-log-level', field: 'componentLogLevel', default: '', valid: [['--component-log-level', 'upstream:debug,config:trace'], 'upstream:debug,config:trace'], invalid: [['--component-log-level', 'upstream=debug'], 'invalid_value', "error: component log level not correctly specified 'upstream=debug'"] },
  { option: 'log-format', field: 'logFormat', default: DEFAULT_LOG_FORMAT, valid: [['--log-format', '%v'], '%v'], invalid: [['--log-format'], 'missing_value', 'Missing a value'] },
  { option: 'log-format-prefix-with-location', field: 'logFormatPrefixWithLocation', default: false, valid: [['--log-format-prefix-with-location', '1'], true], invalid: [['--log-format-prefix-with-location', 'maybe'], 'invalid_value', "invalid --log-format-prefix-with-location 'maybe'"] },
  { option: 'log-format-escaped', field: 'logFormatEscaped', default: false, valid: [['--log-format-escaped'], true], invalid: [['--log-format-escaped=1'], 'unexpected_value', 'does not take a value'] },
  { option: 'enable-fine-grain-logging', field: 'enableFineGrainLogging', default: false, valid: [['--enable-fine-grain-logging'], true], invalid: [['--enable-fine-grain-logging', '--component-log-level', 'http:debug'], 'conflict', 'error: --component-log-level will not work with --enable-fine-grain-logging', 'component-log-level'] },
  { option: 'log-path', field: 'logPath', default: '', valid: [['--log-path', '/var/log/proxy.log'], '/var/log/proxy.log'], invalid: [['--log-path'], 'missing_value', 'Missing a value'] },
  { option: 'restart-epoch', field: 'restartEpoch', default: 0, valid: [['--restart-epoch', '4'], 4], invalid: [['--restart-epoch', 'x'], 'invalid_value', "Couldn't read argument value from string 'x'"] },
  { option: 'service-cluster', field: 'serviceCluster', default: '', valid: [['--service-cluster', 'c1'], 'c1'], invalid: [['--service-cluster'], 'missing_value', 'Missing a value'] },
  { option: 'service-node', field: 'serviceNode', default: '', valid: [['--service-node', 'n1'], 'n1'], invalid: [['--service-node'], 'missing_value', 'Missing a value'] },
  { option: 'service-zone', field: 'serviceZone', default: '', valid: [['--service-zone', 'z1'], 'z1'], invalid: [['--service-zone'], 'missing_value', 'Missing a value'] },
  { option: 'file-flush-interval-msec', field: 'fileFlushIntervalMsec', default: 10000, valid: [['--file-flush-interval-msec', '500'], 500], invalid: [['--file-flush-interval-msec', '5s'], 'invalid_value', "Couldn't read argument value from string '5s'"] },
  { option: 'drain-time-s', field: 'drainTimeS', default: 600, valid: [['--drain-time-s', '30'], 30], invalid: [['--drain-time-s', '99999999999'], 'invalid_value', "Couldn't read argument value"] },
  { option: 'drain-strategy', field: 'drainStrategy', default: 'gradual', valid: [['--drain-strategy', 'immediate'], 'immediate'], invalid: [['--drain-strategy', 'sudden'], 'invalid_value', "error: unknown drain-strategy 'sudden'"] },
  { option: 'parent-shutdown-time-s', field: 'parentShutdownTimeS', default: 900, valid: [['--parent-shutdown-time-s', '60'], 60], invalid: [['--parent-shutdown-time-s', ''], 'invalid_value', "Couldn't read argument value from string ''"] },
  { option: 'disable-hot-restart', field: 'disableHotRestart', default: false, valid: [['--disable-hot-restart'], true], invalid: [['--disable-hot-restart=false'], 'unexpected_value', 'does not take a value'] },
  { option: 'enable-mutex-tracing', field: 'enableMutexTracing', default: false, valid: [['--enable-mutex-tracing'], true], invalid: [['--enable-mutex-tracing=1'], 'unexpected_value', 'does not take a value'] },
  { option: 'allow-unknown-static-fields', field: 'allowUnknownStaticFields', default: false, valid: [['--allow-unknown-static-fields'], true], invalid: [['--allow-unknown-static-fields=1'], 'unexpected_value', 'does not take a value'] },
  { option: 'allow-unknown-fields', field: 'allowUnknownStaticFields', default: false, valid: [['--allow-unknown-fields'], true], invalid: [['--allow-unknown-fields=1'], 'unexpected_value', 'does not take a value'] },
  { option: 'reject-unknown-dynamic-fields', field: 'rejectUnknownDynamicFields', default: false, valid: [['--reject-unknown-dynamic-fields'], true], invalid: [['--reject-unknown-dynamic-fields=0'], 'unexpected_value', 'does not take a value'] },
  { option: 'ignore-unknown-dynamic-fields', field: 'ignoreUnknownDynamicFields', default: false, valid: [['--ignore-unknown-dynamic-fields'], true], invalid: [['--ignore-unknown-dynamic-fields=0'], 'unexpected_value', 'does not take a value'] },
  { option: 'disable-extensions', field: 'disableExtensions', default: [], valid: [['--disable-extensions', 'envoy.filters.http/envoy.filters.http.router,a/b'], ['envoy.filters.http/envoy.filters.http.router', 'a/b']], invalid: [['--disable-extensions'], 'missing_value', 'Missing a value'] },
  { option: 'socket-path', field: 'socketPath', default: DEFAULT_SOCKET_PATH, valid: [['--socket-path', '/run/proxy/hot-restart'], '/run/proxy/hot-restart'], invalid: [['--socket-path'], 'missing_value', 'Missing a value'] },
  { option: 'socket-mode', field: 'socketMode', default: 0, valid: [['--socket-path', '/run/proxy/hot-restart', '--socket-mode', '644'], 0o644], invalid: [['--socket-path', '/run/proxy/hot-restart', '--socket-mode', '999'], 'invalid_value', "error: invalid socket-mode '999'"] },
  { option: 'hot-restart-trust-root', field: 'hotRestartTrustRoot', default: false, valid: [['--hot-restart-trust-root'], true], invalid: [['--hot-restart-trust-root=yes'], 'unexpected_value', 'does not take a value'] },
  { option: 'stats-tag', field: 'statsTags', default: [], valid: [['--stats-tag', 'zone:z1'], [['zone', 'z1']]], invalid: [['--stats-tag', 'zone'], 'invalid_value', "error: misformatted stats-tag 'zone'"] },
];

describe('startup options', () => {
  it('the table covers every option of the command line', () => {
    const covered = new Set(ROWS.map((r) => r.option));
    // --help, --version and --hot-restart-version print and exit; they have their own tests below.
    const printAndExit = ['help', 'version', 'hot-restart-version'];
    const missing = OPTION_SPECS.map((s) => s.name).filter((n) => !covered.has(n) && !printAndExit.includes(n));
    assert.deepEqual(missing, []);
  });

  const defaults = run([]);
  for (const row of ROWS) {
    describe(`--${row.option}`, () => {
      it(`defaults to ${JSON.stringify(row.default)}`, () => assert.deepEqual(defaults[row.field], row.default));
      it(`accepts ${row.valid[0].join(' ') || '(nothing)'}`, () => assert.deepEqual(run(row.valid[0])[row.field], row.valid[1]));
      const [args, code, message, option = row.option] = row.invalid;
      it(`refuses ${args.join(' ')}`, () => {
        const out = fail(args);
        assert.deepEqual([out.code, out.error], [1, { code, option }]);
        assert.ok(out.stderr.includes(message), out.stderr);
      });
    });
  }
});

describe('command-line parsing rules', () => {
  it('accepts --opt=value and --opt value alike', () => {
    assert.equal(run(['--mode=validate']).mode, 'validate');
    assert.equal(run(['--concurrency=2']).concurrency, 2);
    assert.equal(run(['-lwarn']).logLevel, Level.warning);
  });

  it('names an unknown option, in the layout of Envoy\'s parser', () => {
    const out = fail(['--bogus-flag', '1']);
    assert.deepEqual([out.code, out.error], [1, { code: 'unknown_option', option: '--bogus-flag' }]);
    assert.match(out.stderr, /^PARSE ERROR: Argument: --bogus-flag\n {13}Couldn't find match for argument\n/);
    assert.match(out.stderr, /For complete USAGE and HELP type: \n {3}proxy --help/);
    assert.equal(out.stderr.trimEnd().split('\n').at(-1), "--bogus-flag -- Couldn't find match for argument", "Envoy's last line: the exception text");
    assert.equal(fail(['--concurrency', 'x']).stderr.trimEnd().split('\n').at(-1), "(--concurrency) -- Couldn't read argument value from string 'x'");
  });

  it('refuses a stray positional argument', () => {
    assert.deepEqual(fail(['extra']).error, { code: 'unknown_option', option: 'extra' });
    assert.match(fail(['extra']).stderr, /Argument: extra\n {13}Couldn't find match for argument/);
  });

  it('ignores everything after -- (as --ignore_rest does)', () => {
    assert.equal(run(['--mode', 'validate', '--', '--bogus']).mode, 'validate');
  });

  it('runs one worker for --concurrency 0', () => {
    assert.equal(run(['--concurrency', '0']).concurrency, 1);
  });

  it('warns about deprecated aliases and conflicting options', () => {
    const out = parseOptions(['--allow-unknown-fields', '--concurrency', '2', '--cpuset-threads'], environment());
    assert.equal(out.kind, 'run');
    const warnings = (out as Extract<ParseOutcome, { kind: 'run' }>).warnings.join('\n');
    assert.match(warnings, /--allow-unknown-fields is deprecated, use --allow-unknown-static-fields instead/);
    assert.match(warnings, /Both --concurrency and --cpuset-threads options are set; not applying --cpuset-threads/);
  });

  it('takes the epoch from RESTART_EPOCH when --restart-epoch is absent', () => {
    assert.equal(run([], { RESTART_EPOCH: '3' }).restartEpoch, 3);
    assert.equal(run(['--restart-epoch', '5'], { RESTART_EPOCH: '3' }).restartEpoch, 5);
    assert.deepEqual(fail([], { RESTART_EPOCH: 'x' }).error, { code: 'invalid_value', option: 'restart-epoch' });
    assert.deepEqual(fail(['--use-dynamic-base-id'], { RESTART_EPOCH: '2' }).error, { code: 'conflict', option: 'use-dynamic-base-id' });
  });

  it('ignores --socket-mode with an abstract socket path, with a warning, as Envoy (its hot-restart test passes one)', () => {
    const out = parseOptions(['--socket-path', '@envoy_domain_socket', '--socket-mode', '0'], environment());
    assert.equal(out.kind, 'run');
    const { options, warnings } = out as Extract<ParseOutcome, { kind: 'run' }>;
    assert.equal(options.socketMode, 0);
    assert.match(warnings.join('\n'), /--socket-mode '0' is ignored: the hot restart socket '@envoy_domain_socket' is abstract/);
    assert.equal(run(['--socket-path', '/run/proxy/hot-restart']).socketMode, 0o600);
    assert.deepEqual(fail(['--mode', 'init_only']).error, { code: 'unsupported', option: 'mode' });
  });

  it("takes --stats-tag name:value, repeated, with Envoy's checks and messages", () => {
    assert.deepEqual(run(['--stats-tag', 'foo:bar', '--stats-tag', 'a1:b:c']).statsTags, [['foo', 'bar'], ['a1', 'b:c']]);
    assert.match(fail(['--stats-tag', 'nocolon']).stderr, /^error: misformatted stats-tag 'nocolon'\n$/);
    assert.match(fail(['--stats-tag', 'f_o:bar']).stderr, /^error: misformatted stats-tag 'f_o:bar' contains invalid char in 'f_o'\n$/);
    assert.match(fail(['--stats-tag', 'foo:b.ar']).stderr, /^error: misformatted stats-tag 'foo:b\.ar' contains invalid char in 'b\.ar'\n$/);
    assert.match(fail(['--stats-tag', 'foo:']).stderr, /^error: misformatted stats-tag 'foo:' contains invalid char in ''\n$/);
  });

  it('checks component names and levels of --component-log-level', () => {
    assert.deepEqual(fail(['--component-log-level', 'nosuch:debug']).error, { code: 'invalid_value', option: 'component-log-level' });
    assert.match(fail(['--component-log-level', 'nosuch:debug']).stderr, /error: invalid component specified 'nosuch'/);
    assert.deepEqual(fail(['--component-log-level', 'http:loud']).error, { code: 'invalid_value', option: 'component-log-level' });
    assert.equal(run(['--component-log-level', 'http:debug']).componentLevels.get('http'), Level.debug);
  });

  it('validates in Envoy\'s order: the log level before the mode', () => {
    assert.deepEqual(fail(['-l', 'loud', '--mode', 'bogus']).error, { code: 'invalid_value', option: 'log-level' });
  });

  it('prints the hot restart version to stderr without a newline, or "disabled"', () => {
    assert.deepEqual(fail(['--hot-restart-version']), { kind: 'exit', code: 0, stdout: '', stderr: '1.32' });
    assert.equal(fail(['--hot-restart-version', '--disable-hot-restart']).stderr, 'disabled');
  });

  it('handles --help and --version where they stand, before later errors', () => {
    assert.equal(fail(['--version', '--bogus']).code, 0);
    assert.equal(fail(['--bogus', '--version']).code, 1);
    assert.equal(fail(['-h']).stdout, helpText('proxy'));
  });

  it('--help lists every option', () => {
    const help = helpText('proxy');
    for (const spec of OPTION_SPECS) assert.ok(help.includes(`--${spec.name}`), `--help lacks --${spec.name}`);
    assert.match(help, /Log levels: \[trace\]\[debug\]\[info\]\[warning\|warn\]\[error\]\[critical\]\[off\]/);
  });
});

describe('the real command line', () => {
  it('--version prints five slash-separated fields', async () => {
    const out = await runProxy(['--version']);
    assert.equal(out.code, 0);
    const m = /^\nproxy {2}version: (\S+)\n\n$/.exec(out.stdout);
    assert.ok(m, out.stdout);
    const fields = m[1]!.split('/');
    assert.equal(fields.length, 5);
    assert.match(fields[0]!, /^[0-9a-f]{40}$/);
    assert.match(fields[1]!, /^\d+\.\d+\.\d+(-dev)?$/);
    assert.ok(['Clean', 'Modified'].includes(fields[2]!));
    assert.equal(fields[3], 'RELEASE');
    assert.match(fields[4]!, /^OpenSSL(-FIPS)?$/);
  });

  it('the `proxy` command (bin/proxy, run through a link as npm links it) runs without NODE_EXTRA_CA_CERTS; bin/proxy.js keeps it', async (t) => {
    const tmp = tempDir();
    t.after(tmp.cleanup);
    const link = join(tmp.dir, 'proxy');
    symlinkSync(proxyCommand, link);
    // Node warns, as it starts, that the file a NODE_EXTRA_CA_CERTS names cannot be read.
    const env = { NODE_EXTRA_CA_CERTS: join(tmp.dir, 'no-such-bundle.pem') };
    const warning = /Ignoring extra certs from/;
    for (const command of [proxyCommand, link]) {
      const out = await runProxy(['--version'], env, 20_000, command);
      assert.equal(out.code, 0, out.stderr);
      assert.match(out.stdout, /^\nproxy {2}version: \S+\n\n$/);
      assert.doesNotMatch(out.stderr, warning);
    }
    assert.match((await runProxy(['--version'], env)).stderr, warning);
  });

  it('--hot-restart-version prints <protocol>.<layout size>', async () => {
    const out = await runProxy(['--hot-restart-version']);
    assert.equal(out.code, 0);
    assert.match(out.stderr, /^\d+\.\d+$/);
    assert.equal((await runProxy(['--hot-restart-version', '--disable-hot-restart'])).stderr, 'disabled');
  });

  it('exits 1 naming an unknown option', async () => {
    const out = await runProxy(['--no-such-option']);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /PARSE ERROR: Argument: --no-such-option/);
  });

  it('exits 1 when neither -c nor --config-yaml is given', async () => {
    const out = await runProxy(['--mode', 'validate']);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /\[critical\]\[main\].*At least one of --config-path or --config-yaml should be non-empty/);
    assert.equal(out.stdout, '');
  });
});
