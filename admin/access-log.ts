import { closeSync, openSync, writeSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The admin interface's access log (`admin.access_log_path`), one line per request in Envoy's
 * default access-log format. Reopened with the other logs (SIGUSR1, POST /reopen_logs).
 */
export class AdminAccessLog {
  private fd: number;

  constructor(private readonly path: string) {
    this.fd = openSync(path, 'a');
  }

  record(req: IncomingMessage, res: ServerResponse, startedAt: number, bytesSent: number): void {
    const h = (name: string) => {
      const v = req.headers[name];
      return v === undefined ? '-' : Array.isArray(v) ? v.join(',') : v;
    };
    const received = Number(req.headers['content-length'] ?? 0);
    const line =
      `[${new Date(startedAt).toISOString()}] "${req.method} ${req.url} HTTP/${req.httpVersion}" ${res.statusCode} - ${received} ${bytesSent} ` +
      `${Date.now() - startedAt} - "${h('x-forwarded-for')}" "${h('user-agent')}" "${h('x-request-id')}" "${h('host')}" "-"\n`;
    writeSync(this.fd, line);
  }

  reopen(): void {
    const fd = openSync(this.path, 'a');
    closeSync(this.fd);
    this.fd = fd;
  }
}
