// Preloaded (NODE_OPTIONS=--require, see ./timeline.ts) into every process of the trees that
// startup.ts and hot-restart-load.ts start with TIMELINE=1: appends to $PROXY_TIMELINE_DIR/<pid>
// when this process started, when Node had started (this file runs then), when its role's bundle
// was compiled and when its top level had run; in a supervisor when it first forked a child and
// when it sent a worker its configuration; in a worker when its bundle had run (it listens for messages), when its
// configuration came, when it reported ready, when it accepted its first connection and opened its
// first upstream connection after that; in the admin process when it reported ready. With each
// mark, the CPU time the process had used by then: under load a new epoch's processes share the
// cores with the serving epoch and the clients, and its hand-over follows their CPU time.
// Wall-clock milliseconds (Date.now(): this file must not load node:perf_hooks, which the
// processes measured load later or not at all).
'use strict';
const dir = process.env.PROXY_TIMELINE_DIR;
if (dir) {
  const { appendFileSync } = require('node:fs');
  const { join } = require('node:path');
  const file = join(dir, String(process.pid));
  // With each mark, the CPU time (user + system, ms) this process had used by then.
  const cpu = () => { const u = process.cpuUsage(); return ((u.user + u.system) / 1000).toFixed(1); };
  const mark = (name, at = Date.now(), used = cpu()) => appendFileSync(file, `${name} ${at} ${used}\n`);
  // bin/role-launcher.cjs <role> <name> for the children; bin/proxy.js for the supervisor.
  const role = process.argv[1]?.endsWith('role-launcher.cjs') ? process.argv[2] : 'supervisor';
  mark(`role:${role}`, process.ppid);
  mark('start', Math.round(Date.now() - process.uptime() * 1000), '0');
  mark('node');
  // A worker's first connection accepted, and the first upstream connection it opens after that.
  // Hooked as its bundle compiles, not here: the worker's V8 flag is still set when this file runs,
  // and V8 would compile node:net and its streams without Node's code cache (bin/role-launcher.cjs,
  // forgetHeapSizingFlags), a cost the worker does not pay unobserved.
  const hookConnections = () => {
    const { Server, Socket } = require('node:net');
    const emit = Server.prototype.emit;
    let accepted = false;
    Server.prototype.emit = function (event, ...rest) {
      if (event === 'connection' && !accepted) {
        accepted = true;
        mark('accept');
      }
      return emit.call(this, event, ...rest);
    };
    const connect = Socket.prototype.connect;
    let connected = false;
    Socket.prototype.connect = function (...args) {
      if (!connected && accepted) {
        connected = true;
        mark('upstream-connect');
        this.once('connect', () => mark('upstream-connected'));
      }
      return connect.apply(this, args);
    };
  };
  // The role's bundle: read and compiled (with its code cache) by bin/role-launcher.cjs, then run.
  const vm = require('node:vm');
  const Script = vm.Script;
  vm.Script = class extends Script {
    constructor(source, options) {
      if (options?.cachedData !== undefined && !globalThis.timelineCompiled) {
        mark('compiling');
        if (role === 'worker') hookConnections();
      }
      super(source, options);
      if (options?.cachedData !== undefined && !globalThis.timelineCompiled) {
        globalThis.timelineCompiled = true;
        mark('compiled');
        // The script gives the module's function (the bundle is wrapped as Node wraps a module): it returns once the top level ran.
        const run = this.runInThisContext;
        this.runInThisContext = (...args) => {
          const fn = run.apply(this, args);
          return (...moduleArgs) => {
            const result = fn(...moduleArgs);
            mark('ran');
            return result;
          };
        };
      }
    }
  };
  if (role === 'supervisor') {
    const { ChildProcess } = require('node:child_process');
    const spawn = ChildProcess.prototype.spawn;
    let forked = false;
    ChildProcess.prototype.spawn = function (...args) {
      if (!forked) {
        forked = true;
        mark('fork');
      }
      const result = spawn.apply(this, args);
      // The channel's send is set on the instance by spawn.
      if (typeof this.send === 'function' && !this.sendMarked) {
        const send = this.send.bind(this);
        this.sendMarked = true;
        this.send = (m, ...rest) => {
          if (m?.type === 'init') mark('init-sent');
          return send(m, ...rest);
        };
      }
      return result;
    };
  } else if (role === 'worker' || role === 'admin') {
    if (role === 'worker') {
      process.on('message', (m) => m?.type === 'init' && mark('init'));
      // The worker's own first 'message' listener: its bundle has loaded and it waits for its configuration.
      const on = process.on;
      let listening = false;
      process.on = function (event, ...rest) {
        if (event === 'message' && !listening) {
          listening = true;
          mark('listening');
        }
        return on.call(this, event, ...rest);
      };
    }
    const marked = (send) => (m, ...rest) => {
      if (m?.type === 'ready') mark('ready');
      return send.call(process, m, ...rest);
    };
    // A worker opens its channel itself after this file runs (bin/role-launcher.cjs, launchOptions).
    if (process.send) process.send = marked(process.send);
    else {
      Object.defineProperty(process, 'send', {
        configurable: true,
        set(send) {
          Object.defineProperty(process, 'send', { configurable: true, writable: true, value: marked(send) });
        },
      });
    }
  }
}
