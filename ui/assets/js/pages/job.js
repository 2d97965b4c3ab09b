// A job: its groups with their counts, allocations, versions with what
// changed, deployments, evaluations, and why placements failed. The job,
// its allocations and its evaluations are watched; the summary, versions
// and deployments are read again whenever one of those changes.

import { get, q } from '../api.js';
import { card, facts, fill, h, table } from '../dom.js';
import { render as renderDiff } from '../diff.js';
import { ago, allocLink, badge, counts, failures, nodeLink, shortId, time } from '../format.js';

export const title = 'Job';

// splitID reads "<id>@<namespace>" as Nomad's UI writes it; an ID may
// itself hold "@", so the namespace is after the last one.
function splitID(s) {
  const at = s.lastIndexOf('@');
  return at > 0 ? [s.slice(0, at), s.slice(at + 1)] : [s, 'default'];
}

export function render(root, [idns], ctx) {
  const [id, ns] = splitID(idns);
  const base = `/v1/job/${encodeURIComponent(id)}`;
  const nsq = q({ namespace: ns });
  const head = h('div');
  const groups = card('Task groups', 'job-groups');
  const failed = card('Placement failures', 'job-failures');
  const allocs = card('Allocations', 'job-allocations');
  const deps = card('Deployments', 'job-deployments');
  const versions = card('Versions', 'job-versions');
  const evals = card('Evaluations', 'job-evaluations');
  fill(root, h('div', { class: 'crumbs' }, h('a', { href: '/ui/jobs' }, 'Jobs'), ` / ${ns}`), head,
    groups.el, failed.el, allocs.el, deps.el, versions.el, evals.el);

  let jobDef = null;
  let summary = null;
  const drawGroups = () => {
    if (!jobDef) return;
    const tgs = (jobDef.TaskGroups || []).map((tg) => [
      tg.Name, tg.Count, (tg.Tasks || []).map((t) => `${t.Name} (${t.Driver})`).join(', '),
      counts(summary && summary.Summary && summary.Summary[tg.Name]),
    ]);
    fill(groups.body, table(['Group', 'Count', 'Tasks', 'Allocations'], tgs, 'This job has no groups.'));
  };

  // The extras change only with the watched things, so one refresh
  // after each change keeps them current without more connections.
  let pending = null;
  const refresh = () => {
    if (pending) return;
    pending = setTimeout(async () => {
      pending = null;
      try {
        const [s, v, d] = await Promise.all([
          get(`${base}/summary${nsq}`, ctx.signal),
          get(`${base}/versions${q({ namespace: ns, diffs: 'true' })}`, ctx.signal),
          get(`${base}/deployments${nsq}`, ctx.signal),
        ]);
        summary = s;
        drawGroups();
        drawVersions(versions.body, v);
        drawDeployments(deps.body, d || []);
      } catch (err) {
        if (!ctx.signal.aborted) ctx.error(err);
      }
    }, 100);
  };

  ctx.watch(`${base}${nsq}`, (j) => {
    jobDef = j;
    fill(head, h('h1', null, j.Name || j.ID, ' ', badge(j.Stop ? 'stopped' : j.Status)), facts([
      ['ID', j.ID], ['Namespace', j.Namespace], ['Type', j.Type], ['Priority', j.Priority],
      ['Datacenters', (j.Datacenters || []).join(', ')], ['Node pool', j.NodePool || 'default'],
      ['Version', j.Version], ['Submitted', time(j.SubmitTime)],
    ]));
    drawGroups();
    refresh();
  });

  ctx.watch(`${base}/allocations${nsq}`, (list) => {
    list = (list || []).slice().sort((a, b) => b.CreateIndex - a.CreateIndex);
    fill(allocs.body, table(['ID', 'Group', 'Node', 'Status', 'Desired', 'Version', 'Created'],
      list.map((a) => [allocLink(a.ID), a.TaskGroup, nodeLink(a.NodeID, a.NodeName), badge(a.ClientStatus),
        a.DesiredStatus, a.JobVersion, ago(a.CreateTime)]),
      'No allocations.', { id: 'job-allocations-table' }));
    refresh();
  });

  ctx.watch(`${base}/evaluations${nsq}`, (list) => {
    list = (list || []).slice().sort((a, b) => b.CreateIndex - a.CreateIndex);
    fill(evals.body, table(['ID', 'Triggered by', 'Status', 'Description', 'Placement failures', 'Created'],
      list.map((e) => [shortId(e.ID), e.TriggeredBy, badge(e.Status), e.StatusDescription || '',
        Object.keys(e.FailedTGAllocs || {}).length ? 'yes' : 'no', ago(e.CreateTime)]),
      'No evaluations.'));
    // The newest evaluation that scheduled something tells whether the
    // job is short of placements now; a blocked one waits for room.
    const latest = list.find((e) => e.Status !== 'blocked' && e.Status !== 'canceled') || list[0];
    const blocked = list.find((e) => e.Status === 'blocked');
    const why = latest && failures(latest);
    fill(failed.body, why ? [why, blocked ? h('p', { class: 'muted' },
      `Evaluation ${shortId(blocked.ID)} is blocked and will place them when a node has room.`) : null]
      : h('p', { class: 'muted' }, 'None: every allocation the job asked for was placed.'));
    refresh();
  });
}

function drawVersions(el, v) {
  const list = (v && v.Versions) || [];
  const diffs = (v && v.Diffs) || [];
  fill(el, list.length ? list.map((job, i) => h('div', { class: 'version' },
    h('h3', null, `Version ${job.Version}`, job.Stable ? ' ' : null, job.Stable ? badge('stable') : null,
      h('span', { class: 'muted' }, `  submitted ${time(job.SubmitTime)}`)),
    i < list.length - 1 ? renderDiff(diffs[i]) : h('p', { class: 'muted' }, 'The first version.'))) :
    h('p', { class: 'muted' }, 'No versions.'));
}

function drawDeployments(el, list) {
  list = list.slice().sort((a, b) => b.CreateIndex - a.CreateIndex);
  fill(el, table(['ID', 'Version', 'Status', 'Description', 'Groups'],
    list.map((d) => [shortId(d.ID), d.JobVersion, badge(d.Status), d.StatusDescription || '',
      Object.entries(d.TaskGroups || {}).map(([tg, s]) => h('div', null,
        `${tg}: ${s.HealthyAllocs || 0}/${s.DesiredTotal || 0} healthy, ${s.PlacedAllocs || 0} placed` +
        (s.UnhealthyAllocs ? `, ${s.UnhealthyAllocs} unhealthy` : '') +
        (s.DesiredCanaries ? `, canaries ${(s.PlacedCanaries || []).length}/${s.DesiredCanaries}${s.Promoted ? ' (promoted)' : ''}` : '')))]),
    'No deployments.'));
}
