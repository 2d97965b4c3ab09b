// A client (node): its status, drain and eligibility with the controls
// that change them (the node drain and eligibility endpoints), its
// resources, and its allocations.

import { put } from '../api.js';
import { card, facts, fill, h, table } from '../dom.js';
import { ago, allocLink, badge, bytes, duration, jobPath, time } from '../format.js';

export const title = 'Client';

// parseDuration reads "1h30m", "90s" or "2h" as nanoseconds, or null.
export function parseDuration(s) {
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  const unit = { h: 3600e9, m: 60e9, s: 1e9, ms: 1e6 };
  let ns = 0;
  let used = 0;
  for (const m of s.trim().matchAll(re)) { ns += Number(m[1]) * unit[m[2]]; used += m[0].length; }
  return used && used === s.trim().length ? Math.round(ns) : null;
}

export function render(root, [id], ctx) {
  const base = `/v1/node/${encodeURIComponent(id)}`;
  const head = h('div');
  const ctl = card('Drain and eligibility', 'node-controls');
  const res = card('Resources', 'node-resources');
  const allocs = card('Allocations', 'node-allocations');
  fill(root, h('div', { class: 'crumbs' }, h('a', { href: '/ui/clients' }, 'Clients')), head, ctl.el, res.el, allocs.el);

  // act sends one change and reports its outcome; the watch redraws.
  const act = async (btn, path, body, done) => {
    btn.disabled = true;
    try {
      await put(`${base}/${path}`, body, ctx.signal);
      ctx.error(null);
      done.textContent = `Sent at ${new Date().toLocaleTimeString()}.`;
    } catch (err) {
      ctx.error(err);
    } finally {
      btn.disabled = false;
    }
  };

  let update = null;
  ctx.watch(base, (n) => {
    update = update || controls(ctl.body, act);
    update(n);
    fill(head, h('h1', null, `Client ${n.Name} `, badge(n.Status)), facts([
      ['ID', h('span', { class: 'mono', id: 'node-id' }, n.ID)], ['Address', n.HTTPAddr || (n.Attributes || {})['unique.network.ip-address']],
      ['Datacenter', n.Datacenter], ['Node pool', n.NodePool || 'default'], ['Class', n.NodeClass || ''],
      ['Status', `${n.Status}${n.StatusDescription ? `: ${n.StatusDescription}` : ''}`],
      ['Eligibility', h('span', { id: 'node-eligibility' }, n.SchedulingEligibility)],
      ['Drain', h('span', { id: 'node-drain' }, n.DrainStrategy ? drainText(n.DrainStrategy) : 'not draining')],
      n.LastDrain ? ['Last drain', h('span', { id: 'node-last-drain' }, `${n.LastDrain.Status || ''}, ${time(n.LastDrain.UpdatedAt || n.LastDrain.StartedAt)}` +
        ((n.LastDrain.Meta || {}).message ? ` (${n.LastDrain.Meta.message})` : ''))] : null,
      ['Drivers', Object.entries(n.Drivers || {}).filter(([, d]) => d.Detected).map(([k, d]) => `${k}${d.Healthy ? '' : ' (unhealthy)'}`).join(', ')],
      ['OS', `${(n.Attributes || {})['os.name'] || ''} ${(n.Attributes || {})['kernel.name'] || ''}`],
    ]));
    const r = n.NodeResources || {};
    fill(res.body, facts([
      ['CPU', `${(r.Cpu && r.Cpu.CpuShares) || 0} MHz`],
      ['Memory', bytes(((r.Memory && r.Memory.MemoryMB) || 0) * 1024 * 1024)],
      ['Disk', bytes(((r.Disk && r.Disk.DiskMB) || 0) * 1024 * 1024)],
    ]));
  });

  ctx.watch(`${base}/allocations`, (list) => {
    list = (list || []).slice().sort((a, b) => b.CreateIndex - a.CreateIndex);
    fill(allocs.body, table(['ID', 'Job', 'Group', 'Status', 'Desired', 'Created'],
      list.map((a) => [allocLink(a.ID), h('a', { href: jobPath(a.JobID, a.Namespace) }, a.JobID), a.TaskGroup,
        badge(a.ClientStatus), a.DesiredStatus, ago(a.CreateTime)]),
      'No allocations on this client.'));
  });
}

function drainText(d) {
  const deadline = d.Deadline < 0 ? 'no deadline: allocations are stopped now' :
    d.Deadline === 0 ? 'no deadline' : `deadline ${duration(d.Deadline)}${d.ForceDeadline ? `, forced at ${time(d.ForceDeadline)}` : ''}`;
  return `draining (${deadline}${d.IgnoreSystemJobs ? ', system jobs stay' : ''})`;
}

// controls builds the drain and eligibility controls once; update shows
// them for the node as it is now. They are not rebuilt on each update, so
// a deadline being typed is not lost when the node changes.
function controls(el, act) {
  let node = null;
  const done = h('span', { class: 'muted', id: 'node-action-result' });
  const deadline = h('input', { id: 'drain-deadline', value: '1h', size: 6, title: 'How long allocations may take to move, e.g. 30m or 1h' });
  const ignoreSystem = h('input', { type: 'checkbox', id: 'drain-ignore-system' });
  const bad = h('span', { class: 'muted', id: 'drain-deadline-error' });
  const drain = h('button', { id: 'drain-button', class: 'danger', type: 'button' }, 'Drain');
  drain.addEventListener('click', () => {
    const ns = parseDuration(deadline.value);
    if (ns === null) {
      bad.textContent = `Deadline "${deadline.value}" is not a duration: write it as 30m, 1h or 1h30m.`;
      return;
    }
    bad.textContent = '';
    act(drain, 'drain', {
      NodeID: node.ID, DrainSpec: { Deadline: ns, IgnoreSystemJobs: ignoreSystem.checked },
      Meta: { message: 'drained from the web UI' },
    }, done);
  });
  const stop = h('button', { id: 'drain-stop-button', type: 'button' }, 'Stop drain');
  stop.addEventListener('click', () => act(stop, 'drain', { NodeID: node.ID, DrainSpec: null, MarkEligible: true }, done));
  const elig = h('button', { id: 'eligibility-button', type: 'button' });
  elig.addEventListener('click', () => act(elig, 'eligibility',
    { NodeID: node.ID, Eligibility: node.SchedulingEligibility === 'eligible' ? 'ineligible' : 'eligible' }, done));
  const start = h('span', { class: 'controls' }, h('label', null, 'Deadline ', deadline),
    h('label', null, ignoreSystem, ' leave system jobs'), drain, bad);
  fill(el, h('div', { class: 'controls' }, start, stop), h('div', { class: 'controls' }, elig, done));
  return (n) => {
    node = n;
    start.hidden = Boolean(n.DrainStrategy);
    stop.hidden = !n.DrainStrategy;
    elig.textContent = n.SchedulingEligibility === 'eligible' ? 'Mark ineligible' : 'Mark eligible';
  };
}
