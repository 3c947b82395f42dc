import { readFileSync, writeFileSync } from 'node:fs';

/**
 * A generator's command line: writes `file` with `text`, or, with --check, exits 1 when the
 * committed file is not `text` (what `source` generates).
 */
export function writeOrCheck(file: string, text: string, source: string): void {
  if (process.argv.includes('--check')) {
    if (readFileSync(file, 'utf8') !== text) {
      console.error(`${file} is not what ${source} generates: run \`npm run generate\``);
      process.exit(1);
    }
    return;
  }
  writeFileSync(file, text);
  console.log(`${file}: ${text.split('\n').length} lines`);
}
