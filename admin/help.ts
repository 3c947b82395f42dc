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
  return `<!DOCTYPE html>\n<html lang='en'>\n<head>\n<title>Envoy Admin</title>\n<style>.home-table{font-family:sans-serif}.home-data{padding-right:2em}.button-as-link{background:none;border:none;color:blue;text-decoration:underline;cursor:pointer;padding:0;font:inherit}</style>\n</head>\n<body>\n<table class='home-table'>\n<thead><tr><th class='home-data'>Command</th><th class='home-data'>Description</th></tr></thead>\n<tbody>\n${rows}\n</tbody>\n</table>\n</body>\n</html>\n`;
}
