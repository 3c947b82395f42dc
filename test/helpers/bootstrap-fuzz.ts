import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromProto3JSON } from 'proto3-json-serializer';
import { BOOTSTRAP_TYPE, loadBootstrap } from '../../shared/config/bootstrap.js';
import { envoySchema } from '../../shared/config/schema.js';
import { repoRoot } from './cli.js';

/**
 * Seeded mutations of valid bootstraps in every format (YAML, JSON, binary and text proto): bytes
 * flipped, runs duplicated, bytes moved. The same inputs on every run, so a failure replays.
 * Used by test/loader-limits.test.ts (in process) and scripts/probe-hostile.ts (through the CLI).
 */
export function* fuzzedBootstraps(count: number): Generator<{ index: number; ext: string; bytes: Buffer }> {
  const yaml = readFileSync(join(repoRoot, 'examples/routing.yaml'), 'utf8');
  const bootstrap = loadBootstrap({
    configPath: join(repoRoot, 'examples/front-proxy.yaml'), configYaml: '', bootstrapVersion: undefined, allowUnknownStaticFields: false,
    disableExtensions: [], serviceCluster: '', serviceNode: '', serviceZone: '',
  }).bootstrap;
  const json = JSON.stringify(JSON.parse(JSON.stringify(bootstrap)));
  const type = envoySchema().lookupType(BOOTSTRAP_TYPE);
  const binary = Buffer.from(type.encode(fromProto3JSON(type, JSON.parse(json)) as never).finish());
  const text = 'node { id: "n" cluster: "c" }\nadmin { address { socket_address { address: "127.0.0.1" port_value: 9901 } } }\n' +
    'static_resources { clusters { name: "c" type: STATIC connect_timeout { seconds: 1 } load_assignment { cluster_name: "c" endpoints { lb_endpoints { endpoint { address { socket_address { address: "127.0.0.1" port_value: 80 } } } } } } } }\n';
  const seeds: [string, Buffer][] = [['yaml', Buffer.from(yaml)], ['json', Buffer.from(json)], ['pb', binary], ['pb_text', Buffer.from(text)]];
  // xorshift32
  let state = 0x2545f491;
  const random = (n: number) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
  for (let i = 0; i < count; i++) {
    const [ext, seed] = seeds[i % seeds.length]!;
    const bytes = Buffer.from(seed);
    for (let m = 1 + random(8); m > 0; m--) {
      const at = random(bytes.length);
      switch (random(3)) {
        case 0: bytes[at] = random(256); break; // flip a byte
        case 1: bytes.copy(bytes, at, random(bytes.length), random(bytes.length)); break; // duplicate a run
        default: bytes[at] = bytes[random(bytes.length)]!; // move a byte
      }
    }
    yield { index: i, ext, bytes };
  }
}
