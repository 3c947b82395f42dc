import type { IncomingMessage } from 'node:http';
import { addressText, type AccessLogEntry } from '../shared/access-log/entry.js';
import { AccessLogs } from '../shared/access-log/loggers.js';
import type { JsonObject } from '../shared/config/proto-json.js';

/**
 * The admin interface's access logs: `admin.access_log_path` (a file in Envoy's default format)
 * and `admin.access_log` (any access-log list, with filters and formats, as on listeners). The
 * files are buffered and reopened with every other log (SIGUSR1, POST /reopen_logs).
 */
export class AdminAccessLog {
  private constructor(private readonly logs: AccessLogs) {}

  static from(admin: JsonObject): AdminAccessLog | undefined {
    const entries = [...((admin.access_log as unknown[] | undefined) ?? [])];
    if (typeof admin.access_log_path === 'string' && admin.access_log_path !== '') {
      entries.push({ typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog', path: admin.access_log_path } });
    }
    const logs = AccessLogs.from(entries);
    return logs ? new AdminAccessLog(logs) : undefined;
  }

  record(req: IncomingMessage, status: number, responseHeaders: Record<string, string>, startedAt: number, bytesReceived: number, bytesSent: number): void {
    const headers = req.headers;
    const entry: AccessLogEntry = {
      startTime: startedAt,
      protocol: `HTTP/${req.httpVersion}`,
      request: { method: req.method ?? 'GET', path: req.url ?? '/', authority: String(headers.host ?? ''), headers },
      responseHeader: (name) => responseHeaders[name],
      responseCode: status,
      responseFlags: 0,
      bytesReceived,
      bytesSent,
      durationMs: Date.now() - startedAt,
      downstreamRemoteAddress: addressText(req.socket.remoteAddress, req.socket.remotePort),
      downstreamLocalAddress: addressText(req.socket.localAddress, req.socket.localPort),
      healthCheck: false,
    };
    this.logs.log(entry);
  }
}
