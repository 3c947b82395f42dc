import { v8Module } from '../../shared/builtins.js';
import { readBootstrap, ReadTooLarge, sourceBytes, sourcesOf, type BootstrapHandOver, type BootstrapRead, type BootstrapSource, type BootstrapSources } from '../../shared/config/bootstrap.js';
import { envoySchema } from '../../shared/config/schema.js';
import { getLogger } from '../../shared/log/logger.js';
import { buildIdentity } from '../../shared/version.js';
import { readWithoutOptimising } from '../optimising-compiler.js';
import type { ReplyMessage, RequestMessage } from './framing.js';
import { reviveConfigErrors } from '../../shared/config/config-error.js';

/**
 * A hot restart's configuration hand-over: the new epoch sends its bootstrap sources to its
 * parent, which reads them (shared/config/bootstrap.ts, readBootstrap: the half of a load that
 * needs the API schema) and sends the read back; the new epoch then runs the checks that look at
 * the file system itself. A new process spends most of its start loading the schema (measured in
 * scripts/bench/startup.ts); the parent has it loaded. Only a parent of the same build reads (the
 * result must be what this epoch's own code would make of the sources), and sources the same as
 * the parent's own are answered with the parent's read as it is.
 *
 * The read blocks the parent's main loop (not its workers) while it runs, so sources larger than
 * MAX_SOURCE_BYTES, or that expand past MAX_VALUES_READ, are read by the new epoch itself.
 */

const log = getLogger('main', import.meta.url);

/** A static bootstrap is a few kilobytes; 256 KiB reads in about 80 ms in a warm parent. */
export const MAX_SOURCE_BYTES = 256 * 1024;
/**
 * YAML aliases can make small sources expand to millions of values (limits.ts allows up to ten
 * million in a load of its own): the parent reads at most this many, a few times what 256 KiB
 * holds without aliases, and leaves anything larger to the new epoch.
 */
const MAX_VALUES_READ = 1_000_000;

/** The request for `sources`, or undefined when they are too large to hand to the parent. */
export function configurationRequest(sources: BootstrapSources): RequestMessage['configuration'] | undefined {
  if (sourceBytes(sources) > MAX_SOURCE_BYTES) return undefined;
  return { build: buildIdentity(), options: JSON.stringify(sources.options), file: sources.file ?? Buffer.alloc(0) };
}

/** The parent's answer: the read of the child's sources (its own when they are the same), or nothing. */
export function answerConfiguration(rq: NonNullable<RequestMessage['configuration']>, own: BootstrapHandOver | undefined): ReplyMessage {
  const nothing = { configuration: { read: Buffer.alloc(0) } };
  if (rq.build !== buildIdentity() || rq.file.length > MAX_SOURCE_BYTES) return nothing;
  try {
    const options = JSON.parse(rq.options) as BootstrapSource;
    const sources = sourcesOf(options, options.configPath ? rq.file : undefined);
    const read = own?.sources.key.equals(sources.key) ? own.read : readWithoutOptimising(sources, () => readBootstrap(sources, MAX_VALUES_READ));
    return { configuration: { read: v8Module().serialize(read) } };
  } catch (err) {
    if (err instanceof ReadTooLarge) {
      log.info(`the next epoch's configuration is left to it to read: ${err.message}`);
      return nothing;
    }
    // A reader's bug: the child reads its sources itself, and reports it.
    log.warn(`could not read the next epoch's configuration for it: ${(err as Error).message}`);
    return nothing;
  }
}

/** What the child makes of the reply. */
export function takeConfiguration(reply: ReplyMessage | undefined): BootstrapRead | undefined {
  const bytes = reply?.configuration?.read;
  if (!bytes?.length) return undefined;
  const read = v8Module().deserialize(bytes) as BootstrapRead;
  // A structured clone keeps the errors' fields but not their class (their text, their paths' helpers).
  return { ...read, errors: reviveConfigErrors(read.errors), ...(read.refused ? { refused: reviveConfigErrors(read.refused) } : {}) };
}

/**
 * An epoch whose configuration its parent read has not loaded the schema: once it serves, it
 * reads its own sources again, unhurried, so that its own next epoch's read is as quick.
 */
export function prepareForNextEpoch(own: BootstrapHandOver): void {
  if (!own.readElsewhere) return;
  // The schema's file, then the read (which builds the messages it reaches), each in a turn of
  // its own: the main loop's watchdog sees two shorter pauses rather than one (94-105 ms in all
  // for the bench bootstrap).
  const started = performance.now();
  envoySchema();
  setImmediate(() => {
    try {
      readWithoutOptimising(own.sources, () => readBootstrap(own.sources));
      log.debug(`configuration: read again for the next epoch (${(performance.now() - started).toFixed(0)} ms in all)`);
    } catch (err) {
      log.warn(`could not read the configuration again for the next epoch: ${(err as Error).message}`);
    }
  }).unref();
}
