// The jobs list: every job in every namespace the token may read, with
// its status and its allocations by client status, kept current.

import { card, fill, h, table } from '../dom.js';
import { badge, counts, jobPath } from '../format.js';

export const title = 'Jobs';

function total(summary) {
  const out = {};
  for (const tg of Object.values((summary && summary.Summary) || {})) {
    for (const [k, v] of Object.entries(tg)) out[k] = (out[k] || 0) + v;
  }
  return out;
}

export function render(root, params, ctx) {
  const list = card(null, 'jobs-list');
  fill(root, h('h1', null, 'Jobs'), list.el);
  ctx.watch('/v1/jobs?namespace=*', (jobs) => {
    jobs = (jobs || []).slice().sort((a, b) => a.ID.localeCompare(b.ID) || a.Namespace.localeCompare(b.Namespace));
    fill(list.body, table(
      ['Name', 'Namespace', 'Type', 'Priority', 'Status', 'Allocations'],
      jobs.map((j) => [
        h('a', { href: jobPath(j.ID, j.Namespace), class: 'job-link', 'data-job': j.ID }, j.Name || j.ID),
        j.Namespace, j.Type, j.Priority,
        [badge(j.Stop ? 'stopped' : j.Status), j.StatusDescription ? h('div', { class: 'muted' }, j.StatusDescription) : null],
        counts(total(j.JobSummary)),
      ]),
      'No jobs yet. Run one with `drover job run <file>`.'));
  });
}
