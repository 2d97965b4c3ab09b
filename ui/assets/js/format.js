// Formatting shared by the pages: times, sizes, IDs, status badges, and
// placement failures told in words.

import { h } from './dom.js';

export function shortId(id) { return id ? id.slice(0, 8) : ''; }

// time formats nanoseconds since the epoch (Nomad's times) or an RFC 3339
// string as a local date and time.
export function time(v) {
  if (!v) return '';
  const d = typeof v === 'number' ? new Date(v / 1e6) : new Date(v);
  if (Number.isNaN(d.getTime()) || d.getFullYear() < 1971) return '';
  return d.toLocaleString();
}

export function ago(v) {
  if (!v) return '';
  const ms = Date.now() - (typeof v === 'number' ? v / 1e6 : Date.parse(v));
  if (!(ms >= 0)) return time(v);
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

export function bytes(n) {
  if (n === undefined || n === null) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

// duration formats nanoseconds.
export function duration(ns) {
  if (!ns) return '0s';
  let s = Math.round(ns / 1e9);
  const parts = [];
  for (const [unit, len] of [['h', 3600], ['m', 60], ['s', 1]]) {
    if (s >= len) { parts.push(`${Math.floor(s / len)}${unit}`); s %= len; }
  }
  return parts.join('') || `${ns / 1e6}ms`;
}

const tones = {
  running: 'ok', ready: 'ok', complete: 'info', successful: 'ok', eligible: 'ok', alive: 'ok', dead: '',
  pending: 'warn', starting: 'warn', blocked: 'warn', initializing: 'warn', paused: 'warn', queued: 'warn',
  ineligible: 'warn', draining: 'warn', disconnected: 'warn', unknown: 'warn',
  failed: 'bad', lost: 'bad', down: 'bad', cancelled: '', canceled: '',
};

export function badge(status) {
  const s = String(status || 'unknown');
  return h('span', { class: `badge ${tones[s] || ''}` }, s);
}

export function jobPath(id, ns) {
  return `/ui/jobs/${encodeURIComponent(id)}@${encodeURIComponent(ns || 'default')}`;
}

export function link(href, text) { return h('a', { href }, text); }

export function allocLink(id) { return link(`/ui/allocations/${encodeURIComponent(id)}`, shortId(id)); }

export function nodeLink(id, name) { return id ? link(`/ui/clients/${encodeURIComponent(id)}`, name || shortId(id)) : ''; }

// counts shows a task group summary ({Running: 2, Failed: 1, ...}) as
// badges, leaving out zeros.
export function counts(summary) {
  const tone = { Running: 'ok', Starting: 'warn', Queued: 'warn', Complete: 'info', Failed: 'bad', Lost: 'bad', Unknown: 'warn' };
  const out = Object.keys(tone).filter((k) => summary && summary[k])
    .map((k) => h('span', { class: `badge ${tone[k]}` }, `${summary[k]} ${k.toLowerCase()}`));
  return out.length ? h('span', { class: 'counts' }, out) : h('span', { class: 'muted' }, 'none');
}

function plural(n, one, many) { return `${n} ${n === 1 ? one : (many || `${one}s`)}`; }

// placementFailure explains why a task group's allocations could not be
// placed, from the AllocMetric an evaluation records in FailedTGAllocs:
// how many nodes were looked at and, for each reason, how many were
// turned away by it.
export function placementFailure(group, m) {
  const lines = [];
  const failed = 1 + (m.CoalescedFailures || 0);
  const head = `Task group "${group}": ${plural(failed, 'allocation')} could not be placed.`;
  const avail = m.NodesAvailable || {};
  const dcs = Object.keys(avail);
  if (!m.NodesEvaluated && dcs.every((dc) => !avail[dc])) {
    lines.push(dcs.length ? `No ready, eligible nodes in datacenter ${dcs.join(', ')}.` : 'No nodes were ready and eligible to evaluate.');
  } else {
    lines.push(`${plural(m.NodesEvaluated || 0, 'node')} evaluated` +
      (dcs.length ? ` (available: ${dcs.map((dc) => `${avail[dc]} in ${dc}`).join(', ')}).` : '.'));
  }
  for (const [cls, n] of Object.entries(m.ClassFiltered || {})) lines.push(`${plural(n, 'node')} of class "${cls}" filtered out.`);
  for (const [c, n] of Object.entries(m.ConstraintFiltered || {})) lines.push(`${plural(n, 'node')} filtered by constraint ${c}.`);
  if (m.NodesFiltered && !Object.keys(m.ConstraintFiltered || {}).length && !Object.keys(m.ClassFiltered || {}).length) {
    lines.push(`${plural(m.NodesFiltered, 'node')} filtered out.`);
  }
  for (const [dim, n] of Object.entries(m.DimensionExhausted || {})) lines.push(`${plural(n, 'node')} out of ${dim}.`);
  if (m.NodesExhausted && !Object.keys(m.DimensionExhausted || {}).length) lines.push(`${plural(m.NodesExhausted, 'node')} had no room left.`);
  // Classes the scheduler computed ("v1:<hash>") mean nothing to a
  // reader; only the node_class a user gave is named.
  for (const [cls, n] of Object.entries(m.ClassExhausted || {})) {
    if (!cls.startsWith('v1:')) lines.push(`${plural(n, 'node')} of class "${cls}" had no room left.`);
  }
  for (const quota of m.QuotaExhausted || []) lines.push(`Quota exhausted: ${quota}.`);
  return h('div', { class: 'failure' }, h('strong', null, head), h('ul', null, lines.map((l) => h('li', null, l))));
}

// failures renders every placement failure of an evaluation, or null.
export function failures(ev) {
  const tgs = Object.entries(ev.FailedTGAllocs || {});
  if (!tgs.length) return null;
  return tgs.sort(([a], [b]) => a.localeCompare(b)).map(([tg, m]) => placementFailure(tg, m));
}
