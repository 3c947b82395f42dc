// The build `npm ci` runs (prepare) and `npm test` repeats: compile to dist/, stamp the git
// revision, and write the resolved Envoy API descriptor so start-up reads one JSON file.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
if (process.env.npm_command === 'exec') {
  // `npx proxy` in the checkout links the checkout into npm's npx cache, which runs this script
  // again; the checkout is already built by `npm ci` (or `npm run build`).
  process.exit(0);
}

// Install-script policy. npm's strict-allow-scripts would make `npx proxy` fail in the checkout
// (npx installs the project itself, where package.json's allowScripts does not apply), so the
// same guarantee is kept here: every dependency with an install script must be reviewed in
// allowScripts (true to run it, false to skip it), or the build fails.
const manifest = JSON.parse(readFileSync(`${root}/package.json`, 'utf8'));
const lock = JSON.parse(readFileSync(`${root}/package-lock.json`, 'utf8'));
const unreviewed = Object.entries(lock.packages)
  .filter(([path, pkg]) => path && pkg.hasInstallScript)
  .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
  .filter((name) => !(name in (manifest.allowScripts ?? {})));
if (unreviewed.length) {
  console.error(`build: dependencies with install scripts not reviewed in package.json allowScripts: ${[...new Set(unreviewed)].join(', ')}`);
  process.exit(1);
}
const started = Date.now();
execFileSync(process.execPath, [`${root}/scripts/build-native.mjs`], { stdio: 'inherit' });
rmSync(`${root}/dist`, { recursive: true, force: true });
execFileSync(process.execPath, [`${root}/node_modules/typescript/bin/tsc`, '-p', `${root}/tsconfig.build.json`], { stdio: 'inherit' });

const { readGitBuildInfo, buildInfoFile } = await import(`${root}/dist/shared/version.js`);
writeFileSync(buildInfoFile, JSON.stringify({ ...readGitBuildInfo(), buildId: randomUUID() }));
const { writeSchemaCache } = await import(`${root}/dist/shared/config/schema.js`);
writeSchemaCache();
const { bundleRoles } = await import('./bundle.mjs');
const bundleMs = await bundleRoles();
console.log(`build: dist/roles/ bundled in ${bundleMs} ms`);
const { warmCodeCaches } = await import('./warm-code-cache.mjs');
const warmStarted = Date.now();
try {
  await warmCodeCaches();
  console.log(`build: code caches warmed by a run of the proxy in ${Date.now() - warmStarted} ms`);
} catch (err) {
  console.warn(`build: the code caches keep the top level only (the warm-up run failed: ${err.message})`);
}
console.log(`build: dist/ ready in ${Date.now() - started} ms`);
