import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root: the nearest folder above this module holding package.json. The same
 * code runs from TypeScript sources (tests, tsx) and from compiled `dist/`, so paths are
 * never computed relative to a module's own location.
 */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && !dir.endsWith('dist')) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export const packageRoot = findPackageRoot();
export const distDir = join(packageRoot, 'dist');

/** Defined by scripts/bundle.mjs in the bundles it builds (dist/roles/). */
declare const __PROXY_BUNDLE__: boolean | undefined;

/** True when this process runs a role's bundle from dist/roles/ (bin/role-launcher.cjs). */
export const runningBundled = typeof __PROXY_BUNDLE__ !== 'undefined';

/** True when this process runs compiled JavaScript from dist/ rather than TypeScript sources. */
export const runningCompiled = runningBundled || fileURLToPath(import.meta.url).startsWith(distDir);
