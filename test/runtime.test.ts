import assert from 'node:assert/strict';
import { mkdirSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { minimalBootstrap } from './helpers/bootstraps.js';
import { tempDir } from './helpers/cli.js';
import { httpRequest, startProxy, stopAllProxies, waitFor } from './helpers/proxy.js';

const tmp = tempDir();
after(async () => {
  await stopAllProxies();
  tmp.cleanup();
});

function bootstrap(extra: object = {}): object {
  const doc = minimalBootstrap() as Record<string, any>;
  doc.admin.address.socket_address.port_value = 0;
  doc.static_resources.listeners[0].address.socket_address.port_value = 0;
  return { ...doc, ...extra };
}

describe('runtime without layered_runtime', () => {
  it('has no layers, and /runtime_modify answers 503 as Envoy does', async () => {
    const proxy = await startProxy(bootstrap(), ['--concurrency', '1']);
    const runtime = await httpRequest(`http://${proxy.admin}/runtime`);
    assert.equal(runtime.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(runtime.body), { entries: {}, layers: [] });
    const modify = await httpRequest(`http://${proxy.admin}/runtime_modify?a=1`, { method: 'POST' });
    assert.deepEqual([modify.status, modify.body], [503, 'No admin layer specified']);
    await proxy.stop();
  });
});

describe('layered runtime', () => {
  it('reads static, disk and admin layers; admin overrides add, change and delete, with Envoy\'s errors', async () => {
    const v1 = join(tmp.dir, 'v1');
    mkdirSync(join(v1, 'app', 'feature'), { recursive: true });
    writeFileSync(join(v1, 'app', 'feature', 'ratio'), '50\n');
    writeFileSync(join(v1, 'app', 'mode'), 'disk');
    const root = join(tmp.dir, 'current');
    symlinkSync(v1, root);
    const proxy = await startProxy(
      bootstrap({
        layered_runtime: {
          layers: [
            { name: 'static', static_layer: { app: { mode: 'static', limit: 10 }, health: { enabled: true } } },
            { name: 'disk', disk_layer: { symlink_root: root, subdirectory: 'app' } },
            { name: 'admin', admin_layer: {} },
          ],
        },
      }),
      ['--concurrency', '1'],
    );
    const admin = `http://${proxy.admin}`;
    const runtime = async () => JSON.parse((await httpRequest(`${admin}/runtime`)).body);
    const first = await runtime();
    assert.deepEqual(first.layers, ['static', 'disk', 'admin']);
    assert.deepEqual(first.entries['app.mode'], { final_value: 'static', layer_values: ['static', '', ''] });
    assert.deepEqual(first.entries['feature.ratio'], { final_value: '50', layer_values: ['', '50', ''] });
    assert.deepEqual(first.entries['app.limit'], { final_value: '10', layer_values: ['10', '', ''] });
    assert.deepEqual(first.entries['health.enabled'], { final_value: 'true', layer_values: ['true', '', ''] });

    assert.equal((await httpRequest(`${admin}/runtime_modify?feature.ratio=75`)).status, 400); // GET changes nothing
    assert.equal((await runtime()).entries['feature.ratio'].final_value, '50');
    assert.equal((await httpRequest(`${admin}/runtime_modify?feature.ratio=75&new.key=x`, { method: 'POST' })).body, 'OK\n');
    const modified = await runtime();
    assert.deepEqual(modified.entries['feature.ratio'], { final_value: '75', layer_values: ['', '50', '75'] });
    assert.equal(modified.entries['new.key'].final_value, 'x');
    await httpRequest(`${admin}/runtime_modify?feature.ratio=`, { method: 'POST' });
    assert.deepEqual((await runtime()).entries['feature.ratio'], { final_value: '50', layer_values: ['', '50', ''] });

    const form = await httpRequest(`${admin}/runtime_modify`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'from.form=yes' });
    assert.equal(form.body, 'OK\n');
    assert.equal((await runtime()).entries['from.form'].final_value, 'yes');
    const usage = await httpRequest(`${admin}/runtime_modify`, { method: 'POST' });
    assert.equal(usage.status, 400);
    assert.equal(usage.body, 'usage: /runtime_modify?key1=value1&key2=value2&keyN=valueN\n       or send the parameters as form values\nuse an empty value to remove a previously added override');
    const badYaml = await httpRequest(`${admin}/runtime_modify?a=%7B`, { method: 'POST' });
    assert.equal(badYaml.status, 503);
    assert.match((await httpRequest(`${admin}/stats?filter=^runtime\\.`)).body, /^runtime\.admin_overrides_active: 1$/m);

    // Operators swap the symlink root atomically: the disk layer follows.
    const v2 = join(tmp.dir, 'v2');
    mkdirSync(join(v2, 'app', 'feature'), { recursive: true });
    writeFileSync(join(v2, 'app', 'feature', 'ratio'), '90');
    symlinkSync(v2, `${root}.new`);
    renameSync(`${root}.new`, root);
    await waitFor('the disk layer to reload', async () => ((await runtime()).entries['feature.ratio']?.final_value === '90' ? true : undefined));
    const stat = async (name: string) => Number(/: (\d+)$/m.exec((await httpRequest(`${admin}/stats?filter=^runtime\\.${name}$`)).body)?.[1]);
    assert.equal(await stat('load_error'), 0);
    // A tree with an entry that cannot be read (a symlink loop): a load error, the readable keys still loaded.
    const v3 = join(tmp.dir, 'v3');
    mkdirSync(join(v3, 'app', 'feature'), { recursive: true });
    writeFileSync(join(v3, 'app', 'feature', 'ratio'), '95');
    symlinkSync('loop', join(v3, 'app', 'loop'));
    symlinkSync(v3, `${root}.new`);
    renameSync(`${root}.new`, root);
    await waitFor('the disk layer to reload', async () => ((await runtime()).entries['feature.ratio']?.final_value === '95' ? true : undefined));
    assert.equal(await stat('load_error'), 1);
    // Back to a directory seen before, after changing what is under it (Envoy's fault-injection
    // sandbox: rm -r v1/…/delay, then ln -s v1 new && mv -Tf new current): v1 itself is unchanged, the link is new.
    writeFileSync(join(v1, 'app', 'feature', 'ratio'), '10');
    symlinkSync(v1, `${root}.new`);
    renameSync(`${root}.new`, root);
    await waitFor('the disk layer back on v1', async () => ((await runtime()).entries['feature.ratio']?.final_value === '10' ? true : undefined));
    unlinkSync(join(v1, 'app', 'feature', 'ratio'));
    symlinkSync(v1, `${root}.new`);
    renameSync(`${root}.new`, root);
    await waitFor('the key gone with the same target swapped in again', async () => ((await runtime()).entries['feature.ratio'] === undefined ? true : undefined));
    await proxy.stop();
  });

  it('gets an admin layer when layered_runtime has no layers', async () => {
    const proxy = await startProxy(bootstrap({ layered_runtime: {} }), ['--concurrency', '1']);
    assert.equal((await httpRequest(`http://${proxy.admin}/runtime_modify?k=v`, { method: 'POST' })).status, 200);
    assert.deepEqual(JSON.parse((await httpRequest(`http://${proxy.admin}/runtime`)).body).layers, ['admin']);
    await proxy.stop();
  });

  it('switches /stats?filter= to ECMAScript regexes with admin_stats_filter_use_re2=false', async () => {
    const proxy = await startProxy(bootstrap({ layered_runtime: { layers: [{ name: 'admin', admin_layer: {} }] } }), ['--concurrency', '1']);
    const lookahead = `http://${proxy.admin}/stats?filter=${encodeURIComponent('^server\\.(?=live)')}`;
    const re2 = await httpRequest(lookahead);
    assert.equal(re2.status, 400);
    assert.match(re2.body, /^Invalid re2 regex/);
    await httpRequest(`http://${proxy.admin}/runtime_modify?proxy.reloadable_features.admin_stats_filter_use_re2=false`, { method: 'POST' });
    const ecma = await httpRequest(lookahead);
    assert.deepEqual([ecma.status, ecma.body], [200, 'server.live: 1\n']);
    await proxy.stop();
  });
});
