// The build `npm ci` runs (prepare) and `npm test` repeats: compile to dist/, stamp the git
// revision, and write the resolved Envoy API descriptor so start-up reads one JSON file.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const started = Date.now();
rmSync(`${root}/dist`, { recursive: true, force: true });
execFileSync(process.execPath, [`${root}/node_modules/typescript/bin/tsc`, '-p', `${root}/tsconfig.build.json`], { stdio: 'inherit' });

const { readGitBuildInfo, buildInfoFile } = await import(`${root}/dist/shared/version.js`);
writeFileSync(buildInfoFile, JSON.stringify(readGitBuildInfo()));
const { writeSchemaCache } = await import(`${root}/dist/shared/config/schema.js`);
writeSchemaCache();
console.log(`build: dist/ ready in ${Date.now() - started} ms`);
