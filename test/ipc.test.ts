import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { sendTo } from '../shared/ipc.js';
import { tempDir } from './helpers/cli.js';
import { waitFor } from './helpers/proxy.js';

function deadOrZombie(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return true;
  }
}

const tmp = tempDir();
after(() => tmp.cleanup());

describe('IPC sends', () => {
  it('to a child that died unnoticed never raise an unhandled error in the sender', async () => {
    // The supervisor once died of this: the admin process had exited during shutdown but its
    // channel still looked open, the next write failed with EPIPE, and the unhandled 'error'
    // event took the supervisor down with exit status 1.
    const script = tmp.file('dies.mjs', "process.on('message', () => process.kill(process.pid, 'SIGKILL'));\nprocess.send('ready');\n");
    const child = fork(script, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    await new Promise((resolve) => child.once('message', resolve));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    sendTo(child, { type: 'die' });
    // Hold the event loop until the child is dead (a zombie: /proc says so), so the channel still
    // looks open to this process.
    const deadline = Date.now() + 15_000;
    while (!deadOrZombie(child.pid!)) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the child to die');
    }
    assert.equal(child.connected, true, 'the death is not noticed yet');
    assert.equal(sendTo(child, { type: 'too late' }), true);
    await exited;
    // The failed write surfaces as the channel closes; an unhandled error would end this process.
    await waitFor('the channel to close', () => (child.connected ? undefined : true));
    assert.equal(sendTo(child, { type: 'later' }), false, 'a closed channel is reported, not thrown');
  });
});
