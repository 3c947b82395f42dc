import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';

/**
 * RE2 (re2js), loaded the first time a regex is compiled: a process whose configuration has none
 * never runs its module's top level, which builds its Unicode tables (0.7 MB of heap, kept for the
 * process's life, and 3 ms of start). The admin process, a worker and a supervisor whose parent
 * read its bootstrap compile none for a configuration without regexes.
 * In a role's bundle, `require` is the launcher's, which loads re2js's own bundle with its code
 * cache (bin/role-launcher.cjs). From sources (the tests), Node's require loads the package.
 */

declare const __PROXY_BUNDLE__: boolean | undefined;

let loaded: typeof RE2JS | undefined;

export function re2(): typeof RE2JS {
  if (loaded === undefined) {
    const module = (typeof __PROXY_BUNDLE__ !== 'undefined' ? require('re2js') : createRequire(import.meta.url)('re2js')) as typeof import('re2js');
    loaded = module.RE2JS;
  }
  return loaded;
}
