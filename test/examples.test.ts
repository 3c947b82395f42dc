import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { describe, it } from 'node:test';
import { runProxy } from './helpers/cli.js';

// Every bootstrap under examples/ is one a user may copy: each must validate.
describe('examples', () => {
  for (const file of readdirSync('examples').filter((f) => /\.(ya?ml|json|pb_text)$/.test(f))) {
    it(`examples/${file} validates`, async () => {
      const out = await runProxy(['--mode', 'validate', '-c', `examples/${file}`]);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, `configuration 'examples/${file}' OK\n`);
    });
  }
});

describe('the systemd example', () => {
  const analyze = spawnSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' }).stdout.trim();
  it('is a unit systemd-analyze verify accepts', { skip: analyze ? false : 'systemd-analyze is not installed (apt-get install systemd; .ci/run installs it when it runs as root)' }, () => {
    const r = spawnSync(analyze, ['verify', 'examples/systemd/proxy.service'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr.trim(), '', 'no warnings');
  });

  it('starts the proxy with the restart epoch the restarter gives it', () => {
    const script = readFileSync('examples/systemd/proxy-start.sh', 'utf8');
    assert.match(script, /^exec proxy /m);
    assert.match(script, /--restart-epoch "\$RESTART_EPOCH"/);
    assert.ok((statSync('examples/systemd/proxy-start.sh').mode & 0o111) !== 0, 'executable');
  });
});
