import type { LogLevelChange } from '../../shared/ipc.js';
import { LEVEL_NAMES, parseLevel } from '../../shared/log/levels.js';
import { applyLogLevelChange, registry } from '../../shared/log/logger.js';
import type { AdminEndpoint, AdminResponse } from '../endpoint.js';
import type { SupervisorClient } from '../supervisor-client.js';

/**
 * POST /logging: list the loggers, or change levels — all (`level=`), several
 * (`paths=name:level,…`, or the seed's `paths=name=level,…`) or one (`<name>=<level>`) — in every process of the tree (the supervisor
 * relays the change to the workers and to any replacement, and the answer comes once every worker
 * uses the new levels, so the next request is logged at them). Envoy's validation and texts:
 * `warn` is not a level here (only on the command line); unknown names fail the whole request.
 * With --enable-fine-grain-logging, names are source paths, globs or basenames and are not checked.
 */

const USAGE =
  'usage: /logging?<name>=<level> (change single level)\n' +
  'usage: /logging?paths=name1:level1,name2:level2,... (change multiple levels)\n' +
  'usage: /logging?level=<level> (change all levels)\n' +
  `levels: ${LEVEL_NAMES.join(' ')} \n`;

function listing(): string {
  return `active loggers:\n${registry.listLevels().map(([name, level]) => `  ${name}: ${level}\n`).join('')}\n`;
}

function failure(message: string): AdminResponse {
  return { status: 400, body: `error: ${message}\n\n${USAGE}${listing()}` };
}

export function loggingEndpoints(supervisor: SupervisorClient): AdminEndpoint[] {
  return [
    {
      path: '/logging',
      help: 'query/change logging levels',
      mutates: true,
      params: [
        { name: 'paths', help: 'Change multiple logging levels by setting to <logger_name1>:<desired_level1>,<logger_name2>:<desired_level2>. If fine grain logging is enabled, use __FILE__ or a glob experision as the logger name. For example, source/common*:warning' },
        { name: 'level', help: 'desired logging level, this will change all loggers\'s level', choices: ['', ...LEVEL_NAMES] },
      ],
      handle: async (rq) => {
        // HTML forms send empty level= and paths=: they count as absent.
        const params = rq.params.filter(([k, v]) => !((k === 'level' || k === 'paths') && v === ''));
        if (params.length === 0) return { status: 200, body: listing() };
        if (new Set(params.map(([k]) => k)).size > 1) return failure('invalid number of parameters');
        const [key, value] = params[0]!;
        let change: LogLevelChange;
        if (key === 'level') {
          const level = parseLevel(value, { allowWarn: false });
          if (level === undefined) return failure('unknown logger level');
          change = { kind: 'all', level };
        } else {
          const pairs: [string, string][] =
            key === 'paths'
              ? value.split(',').filter((item) => item.trim() !== '').map((item) => {
                  // Envoy's `name:level`, or the seed's `name=level`.
                  const colon = item.indexOf(':');
                  const at = colon >= 0 ? colon : item.indexOf('=');
                  return at < 0 ? [item, ''] : [item.slice(0, at), item.slice(at + 1)];
                })
              : [[key, value]];
          const levels: [string, number][] = [];
          for (const [name, levelText] of pairs) {
            if (!name || !levelText) return failure('empty logger name or empty logger level');
            const level = parseLevel(levelText, { allowWarn: false });
            if (level === undefined) return failure('unknown logger level');
            if (!registry.fineGrain && !registry.listLevels().some(([n]) => n === name)) return failure('unknown logger name');
            levels.push([name, level]);
          }
          change = { kind: 'some', levels };
        }
        applyLogLevelChange(change);
        await supervisor.request((id) => ({ type: 'log_levels', id, change }));
        return { status: 200, body: listing() };
      },
    },
    {
      path: '/reopen_logs',
      help: 'reopen access logs',
      mutates: true,
      // Answered once every process has reopened, so a rotation script can check the new file at once.
      handle: async () => {
        await supervisor.request((id) => ({ type: 'reopen_logs', id }));
        return { status: 200, body: 'OK\n' };
      },
    },
  ];
}
