// Generates supervisor/hot-restart/messages.cjs, the hot-restart messages' encoders and decoders,
// from supervisor/hot-restart/messages.proto with protobufjs's own generator (protobufjs-cli's
// static target). protobufjs otherwise parses the .proto and compiles each message's encoder and
// decoder with `new Function` as it first meets it, in both epochs and on the hand-over's path;
// code generated at build time is in the supervisor's bundle, and its code cache, instead.
// Usage: node scripts/generate-hot-restart-messages.mjs [--check]
//   --check: exits 1 when the committed file is not what the .proto generates (test/hot-restart-messages.test.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const proto = join(root, 'supervisor/hot-restart/messages.proto');
export const generatedFile = join(root, 'supervisor/hot-restart/messages.cjs');

const HEADER = `// Generated from messages.proto by scripts/generate-hot-restart-messages.mjs (protobufjs-cli's
// static target): do not edit; change the .proto and run \`npm run generate\`.
`;

/** The generated module's text. */
export function generate() {
  const { pbjs } = createRequire(import.meta.url)('protobufjs-cli');
  const args = ['-t', 'static-module', '-w', 'commonjs', '-r', 'hot_restart', '--keep-case', '--no-verify', '--no-delimited',
    '--no-typeurl', '--no-comments', '--no-service', '--dependency', 'protobufjs/minimal.js', proto];
  return new Promise((resolve, reject) => {
    pbjs.main(args, (err, output) => (err ? reject(err) : resolve(HEADER + output)));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await generate();
  if (process.argv.includes('--check')) {
    if (readFileSync(generatedFile, 'utf8') !== text) {
      console.error(`${generatedFile} is not what messages.proto generates: run \`npm run generate\``);
      process.exit(1);
    }
  } else {
    writeFileSync(generatedFile, text);
  }
}
