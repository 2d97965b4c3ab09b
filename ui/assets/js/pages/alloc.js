// An allocation: its tasks, their events, their resource use (from the
// client's stats endpoint) and a live log that follows the task's output.

import { get, q, stream } from '../api.js';
import { card, facts, fill, h, table } from '../dom.js';
import { badge, bytes, jobPath, nodeLink, shortId, time } from '../format.js';

export const title = 'Allocation';

// The log shown is bounded: a task that writes fast cannot make the page
// hold more than this.
const LOG_KEEP = 256 * 1024;
const LOG_TAIL = 64 * 1024;

export function render(root, [id], ctx) {
  const path = `/v1/allocation/${encodeURIComponent(id)}`;
  const head = h('div');
  const tasks = card('Tasks', 'alloc-tasks');
  const usage = card('Resource use', 'alloc-usage');
  const events = card('Task events', 'alloc-events');
  const logs = card('Logs', 'alloc-logs');
  fill(root, head, tasks.el, usage.el, logs.el, events.el);
  let alloc = null;
  let started = false;

  ctx.watch(path, (a) => {
    alloc = a;
    fill(head, h('div', { class: 'crumbs' }, h('a', { href: '/ui/jobs' }, 'Jobs'), ' / ',
      h('a', { href: jobPath(a.JobID, a.Namespace) }, a.JobID), ` / ${a.TaskGroup}`),
    h('h1', null, `Allocation ${shortId(a.ID)} `, badge(a.ClientStatus)),
    facts([
      ['ID', h('span', { class: 'mono' }, a.ID)], ['Name', a.Name],
      ['Job', h('a', { href: jobPath(a.JobID, a.Namespace) }, `${a.JobID} (version ${a.Job ? a.Job.Version : a.JobVersion})`)],
      ['Node', nodeLink(a.NodeID, a.NodeName)], ['Desired', `${a.DesiredStatus}${a.DesiredDescription ? `: ${a.DesiredDescription}` : ''}`],
      ['Client', `${a.ClientStatus}${a.ClientDescription ? `: ${a.ClientDescription}` : ''}`],
      a.DeploymentID ? ['Deployment', shortId(a.DeploymentID)] : null,
      ['Created', time(a.CreateTime)],
    ]));
    const states = Object.entries(a.TaskStates || {}).sort(([x], [y]) => x.localeCompare(y));
    const names = taskNames(a);
    fill(tasks.body, table(['Task', 'State', 'Failed', 'Restarts', 'Started', 'Finished'],
      names.map((n) => {
        const s = (a.TaskStates || {})[n] || {};
        return [n, badge(s.State || 'pending'), s.Failed ? 'yes' : 'no', s.Restarts || 0, time(s.StartedAt), time(s.FinishedAt)];
      }), 'No tasks.'));
    const rows = [];
    for (const [task, s] of states) {
      for (const ev of (s.Events || []).slice().reverse()) {
        rows.push([time(ev.Time), task, ev.Type, ev.DisplayMessage || ev.Message || '']);
      }
    }
    rows.sort((x, y) => (x[0] < y[0] ? 1 : -1));
    fill(events.body, table(['Time', 'Task', 'Type', 'Message'], rows, 'No task events yet.', { class: 'events' }));
    if (!started) {
      // The stats and the log need the allocation's tasks and state;
      // the stats have no index to block on, so they are polled.
      started = true;
      startLogs(logs.body, a, names, ctx);
      ctx.poll(async () => {
        if (alloc.ClientStatus !== 'running') {
          fill(usage.body, h('p', { class: 'muted' }, `No resource use: the allocation is ${alloc.ClientStatus}.`));
          return;
        }
        const st = await get(`/v1/client/allocation/${encodeURIComponent(id)}/stats`, ctx.signal);
        drawUsage(usage.body, alloc, st);
      }, 3000);
    }
  });
}

function taskNames(a) {
  const tg = ((a.Job && a.Job.TaskGroups) || []).find((g) => g.Name === a.TaskGroup);
  const names = tg ? tg.Tasks.map((t) => t.Name) : Object.keys(a.TaskStates || {});
  return [...new Set(names)];
}

function bar(frac) {
  const inner = h('span');
  inner.style.width = `${Math.max(0, Math.min(1, frac || 0)) * 100}%`;
  return h('div', { class: 'bar' }, inner);
}

function drawUsage(el, a, st) {
  const res = (a.AllocatedResources && a.AllocatedResources.Tasks) || {};
  const rows = Object.entries((st && st.Tasks) || {}).sort(([x], [y]) => x.localeCompare(y)).map(([task, ts]) => {
    const u = ts.ResourceUsage || {};
    const mem = (u.MemoryStats && (u.MemoryStats.RSS || u.MemoryStats.Usage)) || 0;
    const cpuMHz = (u.CpuStats && u.CpuStats.TotalTicks) || 0;
    const r = res[task] || {};
    const memMax = ((r.Memory && r.Memory.MemoryMB) || 0) * 1024 * 1024;
    const cpuMax = (r.Cpu && r.Cpu.CpuShares) || 0;
    return [task,
      h('div', null, `${bytes(mem)}${memMax ? ` of ${bytes(memMax)}` : ''}`, memMax ? bar(mem / memMax) : null),
      h('div', null, `${Math.round(cpuMHz)} MHz${cpuMax ? ` of ${cpuMax} MHz` : ''}`, cpuMax ? bar(cpuMHz / cpuMax) : null),
      `${((u.CpuStats && u.CpuStats.Percent) || 0).toFixed(1)}%`];
  });
  fill(el, table(['Task', 'Memory', 'CPU', 'CPU %'], rows, 'The client reported no task stats yet.'),
    h('p', { class: 'muted' }, `Measured ${time(st && st.Timestamp)}.`));
}

// startLogs shows a task's stdout or stderr, following it as it grows.
function startLogs(el, a, names, ctx) {
  const task = h('select', { id: 'log-task' }, names.map((n) => h('option', { value: n }, n)));
  const kind = h('select', { id: 'log-type' }, h('option', { value: 'stdout' }, 'stdout'), h('option', { value: 'stderr' }, 'stderr'));
  const out = h('pre', { class: 'log', id: 'log-output' });
  const note = h('span', { class: 'muted' });
  fill(el, h('div', { class: 'controls' }, h('label', null, 'Task ', task), h('label', null, 'Stream ', kind), note), out);
  let ctl = null;
  const follow = async () => {
    if (ctl) ctl.abort();
    ctl = new AbortController();
    const signal = ctl.signal;
    ctx.signal.addEventListener('abort', () => ctl.abort(), { once: true });
    out.textContent = '';
    note.textContent = 'following…';
    const url = `/v1/client/fs/logs/${encodeURIComponent(a.ID)}` +
      q({ task: task.value, type: kind.value, follow: 'true', plain: 'true', origin: 'end', offset: LOG_TAIL });
    try {
      await stream(url, (text) => {
        const atBottom = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
        let s = out.textContent + text;
        if (s.length > LOG_KEEP) s = s.slice(s.length - LOG_KEEP);
        out.textContent = s;
        if (atBottom) out.scrollTop = out.scrollHeight;
      }, signal);
      if (!signal.aborted) note.textContent = 'the log ended';
    } catch (err) {
      if (signal.aborted) return;
      note.textContent = '';
      ctx.error(err);
    }
  };
  task.addEventListener('change', follow);
  kind.addEventListener('change', follow);
  follow();
}
