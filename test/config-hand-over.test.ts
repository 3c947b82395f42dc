import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { BootstrapError, bootstrapSources, loadBootstrap, readBootstrap, type BootstrapSource, type LoadedBootstrap } from '../shared/config/bootstrap.js';
import { answerConfiguration, configurationRequest, MAX_SOURCE_BYTES, takeConfiguration } from '../supervisor/hot-restart/configuration.js';
import { bootstrapSource, minimalBootstrap } from './helpers/bootstraps.js';
import { tempDir } from './helpers/cli.js';
import { downstreamTls, makePki } from './helpers/certs.js';
import type { ConfigError } from '../shared/config/config-error.js';

/**
 * A hot restart's configuration hand-over (supervisor/hot-restart/configuration.ts): the parent
 * epoch reads the new epoch's sources, and the new epoch finishes the load with that read. Here
 * both ends run in one process, through the wire form (the request, and the read serialized):
 * whatever the sources, the outcome must be the one a load of its own gives.
 */

const tmp = tempDir();
const pki = makePki();
after(() => {
  tmp.cleanup();
  pki.remove();
});

const source = bootstrapSource;

type Outcome = { errors: ConfigError[] } | Pick<LoadedBootstrap, 'bootstrap' | 'warnings' | 'unknownFields' | 'tls'>;

function outcome(load: () => LoadedBootstrap): Outcome {
  try {
    const { bootstrap, warnings, unknownFields, tls } = load();
    // A listener's TLS ticket key is drawn by each load (shared/extensions/transport-sockets/tls/session-resumption.ts): only its presence compares.
    for (const context of Object.values(tls.listeners)) if (context.resumption?.ticketKey) context.resumption.ticketKey = '<drawn>';
    return { bootstrap, warnings, unknownFields, tls };
  } catch (err) {
    assert.ok(err instanceof BootstrapError, String(err));
    return { errors: err.errors };
  }
}

/** The load, with the read made by "the parent" and carried over the wire. */
function handedOver(src: BootstrapSource): Outcome {
  return outcome(() => {
    const sources = bootstrapSources(src);
    const request = configurationRequest(sources);
    assert.ok(request, 'small sources are handed to the parent');
    const read = takeConfiguration(answerConfiguration(request, undefined));
    assert.ok(read, 'a parent of the same build reads them');
    return loadBootstrap(src, sources, read);
  });
}

const json = (doc: unknown) => JSON.stringify(doc, null, 2);
const withChain = (mutate: (chain: Record<string, any>, d: Record<string, any>) => void) => {
  const d = minimalBootstrap() as Record<string, any>;
  mutate(d.static_resources.listeners[0].filter_chains[0], d);
  return d;
};

describe('the configuration read by the parent epoch', () => {
  const server = pki.leaf('server', { sans: ['DNS:example.com'], serial: '01' });
  const cases: [name: string, src: () => BootstrapSource][] = [
    ['a valid bootstrap, with a TLS listener', () => source({ configPath: tmp.file('valid.yaml', json(withChain((c) => (c.transport_socket = downstreamTls(server))))) })],
    ['--config-yaml over the file, and the --service-* overrides', () =>
      source({ configPath: tmp.file('overlay.json', json(minimalBootstrap())), configYaml: 'node: { id: from-yaml }', serviceCluster: 'c2', serviceZone: 'z1' })],
    ['--config-yaml alone', () => source({ configYaml: json(minimalBootstrap()) })],
    ['unknown fields allowed (their warnings)', () =>
      source({ configPath: tmp.file('unknown.json', json({ ...minimalBootstrap(), surprise: 1, admin: { address: { socket_address: { address: '127.0.0.1', port_value: 1 } }, extra: true } })), allowUnknownStaticFields: true })],
    ['a deprecated field (its warning)', () => source({ configPath: tmp.file('deprecated.json', json(withChain((_c, d) => (d.admin.access_log_path = '/dev/null')))) })],
    ['errors in the read and in the checks after it, reported together', () =>
      source({ configPath: tmp.file('errors.json', json(withChain((c, d) => {
        d.static_resources.clusters[0].connect_timeout = 'soon';
        c.filters[0].typed_config.route_config.virtual_hosts[0].routes.push({ match: { prefix: '/x' }, route: { cluster: 'nowhere' } });
        c.transport_socket = downstreamTls({ ...server, certPath: `${tmp.dir}/missing.pem` });
      }))) })],
    ['a file that is not YAML', () => source({ configPath: tmp.file('broken.yaml', 'admin: [unclosed') })],
  ];
  for (const [name, src] of cases) {
    it(`gives the outcome a load of its own gives: ${name}`, () => {
      const s = src();
      const own = outcome(() => loadBootstrap(s));
      assert.deepEqual(handedOver(s), own);
      if (name.startsWith('errors')) {
        // The route to an unknown cluster is left out: the cluster in error may be the one meant.
        const errors = 'errors' in own ? own.errors : [];
        assert.deepEqual(errors.map((e) => [e.code, e.path.split('.').pop()]), [['invalid_value', 'connect_timeout'], ['unreadable', 'filename']]);
      }
    });
  }

  it('leaves the checks that look at the file system to the new epoch: a rotated certificate is the new one', () => {
    const [certPath, keyPath] = [`${tmp.dir}/rotating.pem`, `${tmp.dir}/rotating.key`];
    copyFileSync(server.certPath, certPath);
    copyFileSync(server.keyPath, keyPath);
    const src = source({ configPath: tmp.file('rotating.yaml', json(withChain((c) => (c.transport_socket = downstreamTls({ ...server, certPath, keyPath }))))) });
    const sources = bootstrapSources(src);
    const read = takeConfiguration(answerConfiguration(configurationRequest(sources)!, undefined))!;
    const rotated = pki.leaf('rotated', { sans: ['DNS:example.com'], serial: '02' });
    copyFileSync(rotated.certPath, certPath);
    copyFileSync(rotated.keyPath, keyPath);
    const loaded = loadBootstrap(src, sources, read);
    assert.equal(loaded.tls.listeners['ingress#0']!.certificates[0]!.chain.pem, rotated.cert);
  });

  it("answers sources the same as the parent's own with its own read", () => {
    const src = source({ configPath: tmp.file('same.json', json(minimalBootstrap())) });
    const own = loadBootstrap(src).handOver;
    assert.equal(own.readElsewhere, false);
    const marked = { ...own, read: { ...own.read, warnings: ['the parent\'s own read'] } };
    assert.deepEqual(takeConfiguration(answerConfiguration(configurationRequest(bootstrapSources(src))!, marked))?.warnings, ["the parent's own read"]);
    const other = source({ configPath: tmp.file('other.json', json({ ...minimalBootstrap(), node: { id: 'other' } })) });
    assert.deepEqual(takeConfiguration(answerConfiguration(configurationRequest(bootstrapSources(other))!, marked))?.bootstrap.node, { id: 'other' });
    assert.equal(loadBootstrap(other, bootstrapSources(other), readBootstrap(bootstrapSources(other))).handOver.readElsewhere, true);
  });

  it('is not read by a parent of another build, and sources too large are not sent', () => {
    const sources = bootstrapSources(source({ configPath: tmp.file('build.json', json(minimalBootstrap())) }));
    const request = configurationRequest(sources)!;
    assert.equal(takeConfiguration(answerConfiguration({ ...request, build: 'another build' }, undefined)), undefined);
    const large = bootstrapSources(source({ configPath: tmp.file('large.json', json({ ...minimalBootstrap(), padding: 'x'.repeat(MAX_SOURCE_BYTES) })) }));
    assert.equal(configurationRequest(large), undefined);
  });

  it('leaves sources that YAML aliases expand past a million values to the new epoch (the parent\'s loop would wait on them)', () => {
    // 10 × 10 × … values through anchors: a few hundred bytes that a reader walks as 1,100,000.
    const levels = ['a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]'];
    for (const [name, of] of [['b', 'a'], ['c', 'b'], ['d', 'c'], ['e', 'd'], ['f', 'e']]) levels.push(`${name}: &${name} [${Array(10).fill(`*${of}`).join(', ')}]`);
    const yaml = `node:\n  id: n\n  metadata:\n    ${levels.join('\n    ')}\n    g: [*f, *e]\n`;
    const sources = bootstrapSources(source({ configPath: tmp.file('aliases.yaml', yaml) }));
    assert.equal(takeConfiguration(answerConfiguration(configurationRequest(sources)!, undefined)), undefined);
  });

  it('fingerprints every option the read depends on', () => {
    const configPath = tmp.file('key.json', json(minimalBootstrap()));
    const key = (over: Partial<BootstrapSource>) => bootstrapSources(source({ configPath, ...over })).key.toString('hex');
    const keys = [key({}), key({ allowUnknownStaticFields: true }), key({ bootstrapVersion: 3 }), key({ disableExtensions: ['envoy.filters.http.lua'] }), key({ configYaml: 'node: { id: x }' }), key({ serviceNode: 'n' })];
    assert.equal(new Set(keys).size, keys.length);
    assert.equal(key({}), key({}));
  });
});
