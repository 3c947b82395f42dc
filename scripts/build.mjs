// The build `npm ci` runs (prepare) and `npm test` repeats: compile to dist/, stamp the git
// revision, and write the resolved Envoy API descriptor so start-up reads one JSON file.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const started = Date.now();
rmSync(`${root}/dist`, { recursive: true, force: true });
execFileSync(process.execPath, [`${root}/node_modules/typescript/bin/tsc`, '-p', `${root}/tsconfig.build.json`], { stdio: 'inherit' });

const { readGitBuildInfo, buildInfoFile } = await import(`${root}/dist/shared/version.js`);
writeFileSync(buildInfoFile, JSON.stringify(readGitBuildInfo()));
const { writeSchemaCache } = await import(`${root}/dist/shared/config/schema.js`);
writeSchemaCache();
// npm never links a package's own bins into its node_modules/.bin, and `npx proxy` inside the
// checkout would otherwise try to install the checkout into npm's cache. Link it where npx looks first.
mkdirSync(`${root}/node_modules/.bin`, { recursive: true });
rmSync(`${root}/node_modules/.bin/proxy`, { force: true });
symlinkSync('../../bin/proxy.js', `${root}/node_modules/.bin/proxy`);
console.log(`build: dist/ ready in ${Date.now() - started} ms`);
