import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { sendTo } from '../shared/ipc.js';
import { tempDir } from './helpers/cli.js';

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
    // Hold the event loop until the child is surely dead, so the channel still looks open.
    const until = Date.now() + 300;
    while (Date.now() < until) {
      // busy wait
    }
    assert.equal(child.connected, true, 'the death is not noticed yet');
    assert.equal(sendTo(child, { type: 'too late' }), true);
    await exited;
    await new Promise((resolve) => setTimeout(resolve, 50)); // a failed write would surface by now
    assert.equal(sendTo(child, { type: 'later' }), false, 'a closed channel is reported, not thrown');
  });
});
