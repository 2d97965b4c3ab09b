// Recent evaluations of every namespace, with placement failures in words.

import { card, fill, h, table } from '../dom.js';
import { ago, badge, failures, jobPath, nodeLink, shortId } from '../format.js';

export const title = 'Evaluations';

const SHOWN = 200;

export function render(root, params, ctx) {
  const list = card(null, 'evals-list');
  fill(root, h('h1', null, 'Evaluations'), list.el);
  ctx.watch('/v1/evaluations?namespace=*', (evals) => {
    evals = (evals || []).slice().sort((a, b) => b.CreateIndex - a.CreateIndex);
    const shown = evals.slice(0, SHOWN);
    fill(list.body, table(['ID', 'Job', 'Type', 'Triggered by', 'Priority', 'Node', 'Status', 'Placement failures', 'Created'],
      shown.map((e) => {
        const why = failures(e);
        return [shortId(e.ID), h('a', { href: jobPath(e.JobID, e.Namespace) }, e.JobID), e.Type, e.TriggeredBy, e.Priority,
          nodeLink(e.NodeID), [badge(e.Status), e.StatusDescription ? h('div', { class: 'muted' }, e.StatusDescription) : null],
          why ? h('details', null, h('summary', null, `${Object.keys(e.FailedTGAllocs).length} group(s)`), why) : 'none',
          ago(e.CreateTime)];
      }), 'No evaluations.'),
    evals.length > SHOWN ? h('p', { class: 'muted' }, `The newest ${SHOWN} of ${evals.length} are shown.`) : null);
  });
}
