import { sourceBytes, type BootstrapSources } from '../shared/config/bootstrap.js';
import { withoutOptimising } from '../shared/optimising-compiler.js';

/**
 * The supervisor reads a small configuration without V8's optimising compiler (TurboFan).
 *
 * Reading a bootstrap calls a few functions (protobufjs's, building the API schema's messages)
 * several thousand times. That is enough for V8 to optimise them, on a compiler thread.
 *
 * For a one-off read of a small file, the optimised code saves nothing. The compiler's cost stays
 * for the process's whole life, though: its code's pages (3.3 MB), and its threads' allocations
 * (1.9 MB).
 *
 * Measured on the bench bootstrap (scripts/bench/memory.ts): the supervisor settled at 53.1 MB
 * without the compiler during the read, against 58.7-59.5 MB with it.
 *
 * `--mode validate` on generated bootstraps (scripts/bench/validate-large.ts), medians of 5, with
 * the compiler / without it:
 *
 * | bootstrap          | with    | without |
 * |--------------------|---------|---------|
 * | YAML, 42 KiB       | 356 ms  | 379 ms  |
 * | JSON, 84 KiB       | 441 ms  | 352 ms  |
 * | YAML, 138 KiB      | 467 ms  | 448 ms  |
 * | YAML, 415 KiB      | 665 ms  | 740 ms  |
 * | YAML, 1,385 KiB    | 925 ms  | 1,751 ms|
 *
 * So a configuration above READ_WITHOUT_OPTIMISING_LIMIT is read with the compiler. Once the read
 * is over, the compiler is back for whatever the process does next: xDS updates, stats.
 *
 * The flag is set and reset synchronously around the read alone (shared/optimising-compiler.ts,
 * which also turns the compiler off while a process idles), and nothing else runs meanwhile.
 * V8's flag hash goes back to its default with the flag, so the code caches checked after the
 * read (Node's for its built-in modules, the libraries') are still taken. Inside the read V8
 * would refuse them: the read loads no module.
 *
 * An operator's own choice of V8 compiler flags (in the command line or NODE_OPTIONS) is left as
 * given: then the read runs as the process was told to.
 */
export const READ_WITHOUT_OPTIMISING_LIMIT = 128 * 1024;

/** Runs `read` (synchronous) of `sources`, without the optimising compiler if they are under the limit. */
export function readWithoutOptimising<T>(sources: BootstrapSources, read: () => T): T {
  // withoutOptimising leaves an operator's own compiler flags alone.
  return sourceBytes(sources) > READ_WITHOUT_OPTIMISING_LIMIT ? read() : withoutOptimising(read);
}
