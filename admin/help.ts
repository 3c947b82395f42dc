import type { AdminEndpoint } from './endpoint.js';

/** The /help body (also the tail of every 404): endpoints sorted by path, each with its parameters. */
export function helpText(endpoints: readonly AdminEndpoint[]): string {
  let out = 'admin commands are:\n';
  for (const e of [...endpoints].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    out += `  ${e.path}${e.mutates ? ' (POST)' : ''}: ${e.help}\n`;
    for (const p of e.params ?? []) out += `      ${p.name}: ${p.help}${p.choices ? `; One of (${p.choices.join(', ')})` : ''}\n`;
  }
  return out;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&#39;').replace(/"/g, '&quot;');
}

/** The home page: a table of every endpoint; links are relative so the page works behind a path prefix. */
export function homePage(endpoints: readonly AdminEndpoint[]): string {
  const rows = [...endpoints]
    .filter((e) => e.path !== '/')
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map((e, i) => {
      const target = e.path.slice(1);
      const id = target.replace(/\//g, '-');
      const command =
        !e.mutates && !e.params?.length
          ? `<a href='${target}'>${escapeHtml(target)}</a>`
          : `<form action='${target}' method='${e.mutates ? 'post' : 'get'}' id='${id}' class='home-form'><button class='button-as-link'>${escapeHtml(target)}</button></form>`;
      const params = (e.params ?? [])
        .map((p) => {
          const pid = `param-${i}-${id}-${p.name}`;
          const input = p.choices
            ? `<select name='${p.name}' id='${pid}' form='${id}'>${p.choices.map((c) => `<option value='${escapeHtml(c)}'>${escapeHtml(c)}</option>`).join('')}</select>`
            : `<input type='text' name='${p.name}' id='${pid}' form='${id}'>`;
          return `<tr class='vert-space'><td></td><td class='option'>${input} <label for='${pid}'>${escapeHtml(p.name)}</label>: ${escapeHtml(p.help)}</td></tr>`;
        })
        .join('\n');
      return `<tr class='vert-space'><td class='home-data'>${command}</td><td class='home-data'>${escapeHtml(e.help)}</td></tr>${params ? '\n' + params : ''}`;
    })
    .join('\n');
  return `<!DOCTYPE html>\n<html lang='en'>\n<head>\n<title>Envoy Admin</title>\n<style>${STYLE}</style>\n</head>\n<body>\n${LIVE_PANEL}\n<table class='home-table'>\n<thead><tr><th class='home-data'>Command</th><th class='home-data'>Description</th></tr></thead>\n<tbody>\n${rows}\n</tbody>\n</table>\n<script>${LIVE_SCRIPT}</script>\n</body>\n</html>\n`;
}

const STYLE =
  '.home-table{font-family:sans-serif}.home-data{padding-right:2em}' +
  '.button-as-link{background:none;border:none;color:blue;text-decoration:underline;cursor:pointer;padding:0;font:inherit}' +
  '#live{font-family:sans-serif;margin-bottom:1.5em}#live table{border-collapse:collapse}#live td,#live th{padding:.15em 1em .15em 0;text-align:left}' +
  '#live .figure{font-variant-numeric:tabular-nums}.unhealthy{color:#b00}#live-error{color:#b00}';

/**
 * The live figures at the top of the home page: the server's state, requests and connections
 * (totals, in flight, and the request rate between two refreshes), each cluster's healthy hosts,
 * and each resource of dynamic configuration with its version, state and last refusal. The page
 * reads them from the admin's own JSON (/server_info, /stats?format=json, /clusters?format=json,
 * /config_status?format=json) every two seconds, by relative URLs so it works behind a path prefix.
 */
const LIVE_PANEL = `<div id='live'>
<table>
<tr><th>State</th><td id='live-state' class='figure'>…</td><th>Uptime</th><td id='live-uptime' class='figure'>…</td></tr>
<tr><th>Requests</th><td id='live-requests' class='figure'>…</td><th>In flight</th><td id='live-requests-active' class='figure'>…</td><th>Per second</th><td id='live-rps' class='figure'>…</td></tr>
<tr><th>Connections</th><td id='live-connections' class='figure'>…</td><th>Open</th><td id='live-connections-active' class='figure'>…</td></tr>
</table>
<table id='live-hosts'><thead><tr><th>Cluster</th><th>Healthy hosts</th></tr></thead><tbody></tbody></table>
<table id='live-xds' hidden><thead><tr><th>Dynamic resource</th><th>State</th><th>Version</th><th>Since</th><th>Last refusal</th></tr></thead><tbody></tbody></table>
<div id='live-error'></div>
</div>`;

const LIVE_SCRIPT = `
(function () {
  var previous;
  var FILTER = '^http\\\\.[^.]+\\\\.downstream_(rq|cx)_(total|active)$';
  function text(id, value) { document.getElementById(id).textContent = value; }
  // The proxy's traffic: the admin interface's own (http.admin.*, this page's polling among it) is left out.
  function sum(stats, suffix) {
    return stats.filter(function (s) { return s.name.slice(-suffix.length) === suffix && s.name.indexOf('http.admin.') !== 0; })
      .reduce(function (t, s) { return t + (s.value || 0); }, 0);
  }
  function healthy(host) {
    var h = host.health_status || {};
    return !h.failed_active_health_check && !h.failed_outlier_check && !h.failed_active_degraded_check &&
      !h.pending_dynamic_removal && !h.pending_active_hc && (h.eds_health_status || 'HEALTHY') === 'HEALTHY';
  }
  function json(path) {
    return fetch(path, { cache: 'no-store' }).then(function (r) {
      if (!r.ok) throw new Error(path + ': ' + r.status);
      return r.json();
    });
  }
  function refresh() {
    Promise.all([json('server_info'), json('stats?format=json&usedonly&filter=' + encodeURIComponent(FILTER)), json('clusters?format=json'), json('config_status?format=json')])
      .then(function (all) {
        var info = all[0], stats = all[1].stats || [], clusters = all[2].cluster_statuses || [], resources = all[3].resources || [];
        text('live-state', info.state);
        text('live-uptime', info.uptime_current_epoch);
        var requests = sum(stats, '.downstream_rq_total');
        var now = Date.now();
        text('live-requests', requests);
        text('live-requests-active', sum(stats, '.downstream_rq_active'));
        text('live-connections', sum(stats, '.downstream_cx_total'));
        text('live-connections-active', sum(stats, '.downstream_cx_active'));
        if (previous) text('live-rps', ((requests - previous.requests) * 1000 / Math.max(1, now - previous.at)).toFixed(1));
        previous = { requests: requests, at: now };
        var body = document.querySelector('#live-hosts tbody');
        body.textContent = '';
        clusters.forEach(function (c) {
          var hosts = c.host_statuses || [];
          var up = hosts.filter(healthy).length;
          var row = document.createElement('tr');
          row.className = up < hosts.length ? 'unhealthy' : '';
          var name = document.createElement('td');
          name.textContent = c.name;
          var count = document.createElement('td');
          count.className = 'figure';
          count.textContent = up + ' / ' + hosts.length;
          row.appendChild(name);
          row.appendChild(count);
          body.appendChild(row);
        });
        var xds = document.getElementById('live-xds');
        xds.hidden = resources.length === 0;
        var rows = xds.querySelector('tbody');
        rows.textContent = '';
        resources.forEach(function (r) {
          var row = document.createElement('tr');
          row.className = r.error_state ? 'unhealthy' : '';
          var refusal = r.error_state ? r.error_state.last_update_attempt + ': ' + r.error_state.details : '';
          [r.type + ' ' + r.name, r.state, r.version_info || '', r.last_updated || '', refusal].forEach(function (value) {
            var cell = document.createElement('td');
            cell.textContent = value;
            row.appendChild(cell);
          });
          rows.appendChild(row);
        });
        text('live-error', '');
      })
      .catch(function (err) { text('live-error', 'live figures unavailable: ' + err.message); });
  }
  refresh();
  setInterval(refresh, 2000);
})();
`;
