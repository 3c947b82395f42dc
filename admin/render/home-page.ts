import type { AdminEndpoint } from '../endpoint.js';

/**
 * The admin home page. On top, what an operator looks at during a drain or an incident: the
 * server's state and where a hot restart stands with its deadline, plots of the last minutes
 * (request rate, 5xx rate, p50/p99 request time, open connections, from /traffic_history: the
 * "per second" figure is the rate plot's latest point, so the two agree), why the server drains,
 * the node, the listeners with their addresses, each cluster's hosts by health, the version of each
 * xDS type, and each dynamic resource's version and last refusal. Below, Envoy's
 * table of every endpoint. Plain HTML, SVG and script served by the admin itself: no CDN, no
 * build step. Every URL is relative, so the page works behind a path prefix.
 */
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

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&#39;').replace(/"/g, '&quot;');
}

const STYLE =
  '.home-table{font-family:sans-serif}.home-data{padding-right:2em}' +
  '.button-as-link{background:none;border:none;color:blue;text-decoration:underline;cursor:pointer;padding:0;font:inherit}' +
  '#live{font-family:sans-serif;margin-bottom:1.5em}#live table{border-collapse:collapse;margin-bottom:.8em}#live td,#live th{padding:.15em 1em .15em 0;text-align:left}' +
  '#live .figure{font-variant-numeric:tabular-nums}.unhealthy{color:#b00}#live-error{color:#b00}' +
  '#live-restart,#live-versions{margin-bottom:.8em}#live-restart.draining,#live-drain{color:#a60;font-weight:bold;margin-bottom:.4em}' +
  '#plots{display:flex;flex-wrap:wrap;gap:1em;margin-bottom:1em}.plot{border:1px solid #ccc;padding:.4em .6em;width:270px}' +
  '.plot h3{font-size:.9em;margin:0 0 .2em 0;font-weight:normal}.plot .now{font-weight:bold;font-variant-numeric:tabular-nums}' +
  '.plot svg{display:block;width:100%;height:90px;background:#fafafa}.plot .axis{font-size:.75em;color:#666;display:flex;justify-content:space-between}' +
  '.plot polyline{fill:none;stroke-width:1.5}.s0{stroke:#1f6fb4}.s1{stroke:#c0392b}.legend0{color:#1f6fb4}.legend1{color:#c0392b}';

/** One plot: its title, its latest value(s), the SVG with one polyline per series, the axis labels. */
function plotPanel(id: string, title: string, series: string[]): string {
  const legend = series.length > 1 ? series.map((s, i) => ` <span class='legend${i}'>${s} <span class='now' id='${id}-now${i}'>–</span></span>`).join('') : ` <span class='now' id='${id}-now0'>–</span>`;
  const lines = series.map((_, i) => `<polyline id='${id}-line${i}' class='s${i}' points=''/>`).join('');
  return `<div class='plot' id='${id}'><h3>${title}${legend}</h3><svg viewBox='0 0 300 90' preserveAspectRatio='none'>${lines}</svg><div class='axis'><span id='${id}-span'></span><span>max <span id='${id}-max'>–</span></span></div></div>`;
}

const LIVE_PANEL = `<div id='live'>
<table>
<tr><th>State</th><td id='live-state' class='figure'>…</td><th>Uptime</th><td id='live-uptime' class='figure'>…</td><th>Node</th><td id='live-node'>…</td></tr>
<tr><th>Requests</th><td id='live-requests' class='figure'>…</td><th>In flight</th><td id='live-requests-active' class='figure'>…</td><th>Per second</th><td id='live-rps' class='figure'>…</td></tr>
<tr><th>Connections</th><td id='live-connections' class='figure'>…</td><th>Open</th><td id='live-connections-active' class='figure'>…</td></tr>
</table>
<div id='live-drain' hidden></div>
<div id='live-restart'>…</div>
<div id='plots'>
${plotPanel('plot-rps', 'Requests per second', ['rps'])}
${plotPanel('plot-5xx', '5xx per second', ['5xx'])}
${plotPanel('plot-latency', 'Latency, ms', ['p50', 'p99'])}
${plotPanel('plot-connections', 'Open connections', ['open'])}
</div>
<table id='live-listeners'><thead><tr><th>Listener</th><th>Address</th></tr></thead><tbody></tbody></table>
<table id='live-hosts'><thead><tr><th>Cluster</th><th>Healthy hosts</th><th>Degraded</th><th>Ejected</th><th>Unhealthy</th></tr></thead><tbody></tbody></table>
<div id='live-versions' hidden></div>
<table id='live-xds' hidden><thead><tr><th>Dynamic resource</th><th>State</th><th>Version</th><th>Since</th><th>Last refusal</th></tr></thead><tbody></tbody></table>
<div id='live-error'></div>
</div>`;

/**
 * The page's script, as the browser runs it (String.raw: written exactly as served). Every two
 * seconds it reads /server_info, /stats (the proxy's own totals), /clusters, /config_status,
 * /hot_restart_status, /traffic_history and /listeners, all as JSON.
 */
const LIVE_SCRIPT = String.raw`
(function () {
  var FILTER = '^http\\.[^.]+\\.downstream_(rq|cx)_(total|active)$';
  function text(id, value) { document.getElementById(id).textContent = value; }
  // The proxy's traffic: the admin interface's own (http.admin.*, this page's polling among it) is left out.
  function sum(stats, suffix) {
    return stats.filter(function (s) { return s.name.slice(-suffix.length) === suffix && s.name.indexOf('http.admin.') !== 0; })
      .reduce(function (t, s) { return t + (s.value || 0); }, 0);
  }
  // A host counts once: failing active health checks or unhealthy by EDS first, then ejected by
  // outlier detection, then degraded; healthy otherwise.
  function health(host) {
    var h = host.health_status || {};
    var eds = h.eds_health_status || 'HEALTHY';
    if (h.failed_active_health_check || h.pending_active_hc || (eds !== 'HEALTHY' && eds !== 'DEGRADED' && eds !== 'UNKNOWN')) return 'unhealthy';
    if (h.failed_outlier_check) return 'ejected';
    if (h.failed_active_degraded_check || eds === 'DEGRADED') return 'degraded';
    return 'healthy';
  }
  function json(path) {
    return fetch(path, { cache: 'no-store' }).then(function (r) {
      if (!r.ok) throw new Error(path.split('?')[0] + ': ' + r.status);
      return r.json();
    });
  }
  function fixed(v, whole) { return v === null || v === undefined ? '–' : whole || v >= 100 ? v.toFixed(0) : v.toFixed(1); }
  function clock(ms) { return new Date(ms).toLocaleTimeString(); }
  // A round axis maximum: 1, 2 or 5 times a power of ten, at least the largest value.
  function roundUp(v) {
    if (!(v > 0)) return 1;
    var p = Math.pow(10, Math.floor(Math.log10(v)));
    return [1, 2, 5, 10].map(function (m) { return m * p; }).filter(function (m) { return m >= v; })[0];
  }
  // Draws the points' values for each key as polylines; the window is the points' span, 1 to 10 minutes.
  function plot(id, points, keys, whole) {
    var last = points.length ? points[points.length - 1].at : Date.now();
    var span = points.length > 1 ? Math.min(600000, Math.max(60000, last - points[0].at)) : 60000;
    var max = 0;
    points.forEach(function (p) { keys.forEach(function (k) { if (p[k] !== null && p[k] > max) max = p[k]; }); });
    var top = roundUp(max);
    keys.forEach(function (k, i) {
      var xy = points.filter(function (p) { return p[k] !== null && p.at >= last - span; }).map(function (p) {
        var x = 300 - ((last - p.at) / span) * 300;
        var y = 88 - (p[k] / top) * 84;
        return x.toFixed(1) + ',' + y.toFixed(1);
      });
      document.getElementById(id + '-line' + i).setAttribute('points', xy.join(' '));
      var latest = points.length ? points[points.length - 1][k] : null;
      text(id + '-now' + i, fixed(latest, whole));
    });
    text(id + '-max', fixed(top, top >= 1));
    text(id + '-span', 'last ' + Math.round(span / 60000) + ' min');
  }
  var REASONS = {
    healthcheck_fail: 'health checks failed (POST /healthcheck/fail; /healthcheck/ok restores them)',
    drain_listeners: 'listeners drained (POST /drain_listeners)',
    hot_restart: 'a newer epoch took over (hot restart)',
    shutdown: 'shutting down'
  };
  function drain(status) {
    var el = document.getElementById('live-drain');
    var reasons = status.drain_reasons || [];
    el.hidden = reasons.length === 0;
    el.textContent = reasons.length ? 'Draining: ' + reasons.map(function (r) { return REASONS[r] || r; }).join('; ') : '';
  }
  function rows(id, list) {
    var body = document.querySelector('#' + id + ' tbody');
    body.textContent = '';
    list.forEach(function (values) {
      var row = document.createElement('tr');
      values.forEach(function (value) {
        var cell = document.createElement('td');
        cell.textContent = value;
        row.appendChild(cell);
      });
      body.appendChild(row);
    });
  }
  function address(a) {
    if (!a) return '';
    if (a.pipe) return a.pipe.path;
    var s = a.socket_address || {};
    return (s.address && s.address.indexOf(':') >= 0 ? '[' + s.address + ']' : s.address || '') + ':' + (s.port_value || 0) + (s.protocol === 'UDP' ? ' (UDP)' : '');
  }
  // The version of each xDS type: one version, or the versions its resources are at.
  function versions(list) {
    var byType = {};
    list.forEach(function (r) {
      if (!r.version_info) return;
      var seen = byType[r.type] || (byType[r.type] = []);
      if (seen.indexOf(r.version_info) < 0) seen.push(r.version_info);
    });
    var el = document.getElementById('live-versions');
    var types = Object.keys(byType).sort();
    el.hidden = types.length === 0;
    el.textContent = types.length ? 'Versions: ' + types.map(function (t) { return t + ' ' + byType[t].join(', '); }).join('; ') : '';
  }
  function restart(status, info) {
    var el = document.getElementById('live-restart');
    var draining = info.state === 'DRAINING';
    if (!status.enabled) {
      el.textContent = 'Hot restart disabled' + (draining ? '; draining' : '');
    } else {
      var parts = ['Epoch ' + status.restart_epoch + ', ' + status.phase];
      if (status.parent && status.parent !== 'none') {
        var parent = 'parent ' + status.parent;
        if (status.parent === 'draining' && status.parent_terminate_at) {
          parent += ', terminated in ' + status.parent_terminate_in_seconds + ' s (at ' + clock(Date.parse(status.parent_terminate_at)) + ')';
          draining = true;
        }
        parts.push(parent);
      }
      el.textContent = 'Hot restart: ' + parts.join('; ');
    }
    el.className = draining ? 'draining' : '';
  }
  function hosts(clusters) {
    var body = document.querySelector('#live-hosts tbody');
    body.textContent = '';
    clusters.forEach(function (c) {
      var all = c.host_statuses || [];
      var count = { healthy: 0, degraded: 0, ejected: 0, unhealthy: 0 };
      all.forEach(function (h) { count[health(h)]++; });
      var row = document.createElement('tr');
      row.className = count.healthy < all.length ? 'unhealthy' : '';
      [c.name, count.healthy + ' / ' + all.length, count.degraded, count.ejected, count.unhealthy].forEach(function (value, i) {
        var cell = document.createElement('td');
        if (i > 0) cell.className = 'figure';
        cell.textContent = value;
        row.appendChild(cell);
      });
      body.appendChild(row);
    });
  }
  function resources(list) {
    var xds = document.getElementById('live-xds');
    xds.hidden = list.length === 0;
    var rows = xds.querySelector('tbody');
    rows.textContent = '';
    list.forEach(function (r) {
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
  }
  function refresh() {
    Promise.all([json('server_info'), json('stats?format=json&usedonly&filter=' + encodeURIComponent(FILTER)), json('clusters?format=json'),
      json('config_status?format=json'), json('hot_restart_status'), json('traffic_history'), json('listeners?format=json')])
      .then(function (all) {
        var info = all[0], stats = all[1].stats || [];
        var points = (all[5].points || []).map(function (p) { p.at = Date.parse(p.time); return p; });
        text('live-state', info.state);
        text('live-uptime', info.uptime_current_epoch);
        var requests = sum(stats, '.downstream_rq_total');
        var node = (info.node || {});
        text('live-node', (node.id || '–') + ' (cluster ' + (node.cluster || '–') + ')');
        text('live-requests', requests);
        text('live-requests-active', sum(stats, '.downstream_rq_active'));
        text('live-connections', sum(stats, '.downstream_cx_total'));
        text('live-connections-active', sum(stats, '.downstream_cx_active'));
        // The rate plot's latest point: one figure, one source.
        text('live-rps', points.length ? fixed(points[points.length - 1].rps) : '–');
        drain(all[4]);
        restart(all[4], info);
        rows('live-listeners', (all[6].listener_statuses || []).map(function (l) {
          return [l.name, [address(l.local_address)].concat((l.additional_local_addresses || []).map(address)).join(', ')];
        }));
        plot('plot-rps', points, ['rps']);
        plot('plot-5xx', points, ['errors_5xx_per_second']);
        plot('plot-latency', points, ['p50_ms', 'p99_ms']);
        plot('plot-connections', points, ['connections'], true);
        hosts(all[2].cluster_statuses || []);
        resources(all[3].resources || []);
        versions(all[3].resources || []);
        text('live-error', '');
      })
      .catch(function (err) { text('live-error', 'live figures unavailable: ' + err.message); });
  }
  refresh();
  setInterval(refresh, 2000);
})();
`;
