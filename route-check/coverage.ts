import { randomUUID } from 'node:crypto';
import type protobuf from 'protobufjs';
import { obj } from '../shared/config/access.js';
import type { RouteTable, Route } from '../shared/http/route-table.js';
import { textFormat } from './text-format.js';

/**
 * Route coverage as Envoy's tool counts it. Each route counts once (a weighted route once per
 * cluster). A check that passes marks an entry covered: a forwarding route's entry is the route
 * with the cluster it chose, a direct response's or redirect's is the route. By default the
 * coverage is the share of entries covered; with --covall, each entry counts the share of its
 * checks covered (a forwarding route's five: cluster, virtual cluster, virtual host, path and host
 * rewrite; a direct response's two: path_redirect and code_redirect).
 */

const ROUTE_FIELDS = 5;
const DIRECT_FIELDS = 2;

interface Entry {
  route: Route;
  fields: Set<string>;
  direct: boolean;
}

export class Coverage {
  private readonly entries = new Map<string, Entry>();
  private readonly ids = new Map<Route, string>();
  /** The names Envoy's tool gives routes (`<name>-<uuid>`), by which --detailed-coverage lists them. */
  private readonly names = new Map<Route, string>();

  constructor(private readonly table: RouteTable) {
    for (const vh of table.virtualHosts) for (const r of vh.routes) this.names.set(r, `${r.name ?? ''}-${randomUUID()}`);
  }

  markRoute(route: Route, cluster: string, field: string): void {
    this.mark(`${this.id(route)}\0${cluster}`, route, field, false);
  }

  markDirect(route: Route, field: string): void {
    this.mark(this.id(route), route, field, true);
  }

  private id(route: Route): string {
    let id = this.ids.get(route);
    if (id === undefined) this.ids.set(route, (id = String(this.ids.size)));
    return id;
  }

  private mark(key: string, route: Route, field: string, direct: boolean): void {
    let entry = this.entries.get(key);
    if (!entry) this.entries.set(key, (entry = { route, fields: new Set(), direct }));
    entry.fields.add(field);
  }

  private get routeCount(): number {
    let n = 0;
    for (const vh of this.table.virtualHosts) for (const r of vh.routes) n += r.action.kind === 'route' && r.action.weightedClusters ? r.action.weightedClusters.length : 1;
    return n;
  }

  /** The coverage in percent, narrowed to a float as Envoy's is. */
  percent(comprehensive: boolean): number {
    let covered = 0;
    for (const e of this.entries.values()) covered += comprehensive ? e.fields.size / (e.direct ? DIRECT_FIELDS : ROUTE_FIELDS) : 1;
    return Math.fround((100 * Math.fround(covered)) / this.routeCount);
  }

  /** The lines naming routes without a test: by match (--covall) or by name (--detailed-coverage). */
  missing(comprehensive: boolean, matchType: protobuf.Type): string[] {
    const covered = new Set([...this.entries.values()].map((e) => e.route));
    const lines: string[] = [];
    for (const vh of this.table.virtualHosts) {
      for (const r of vh.routes) {
        if (covered.has(r)) continue;
        lines.push(comprehensive ? `Missing test for host: ${vh.name}, route: ${textFormat(matchType, obj(r.config.match))}` : `Missing test for host: ${vh.name}, route name: ${this.names.get(r)}`);
      }
    }
    return lines;
  }
}

/** A number as C++'s `ostream << double` prints it (%g: six significant digits, no trailing zeros). */
export function formatG(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (value === 0) return '0';
  const exponent = Math.floor(Math.log10(Math.abs(value)));
  if (exponent < -4 || exponent >= 6) {
    const [mantissa, exp] = value.toExponential(5).split('e');
    const e = Number(exp);
    return `${String(Number(mantissa))}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  return String(Number(value.toPrecision(6)));
}
