// The clients (nodes) list: status, eligibility and drain of each.

import { card, fill, h, table } from '../dom.js';
import { badge, nodeLink, shortId } from '../format.js';

export const title = 'Clients';

export function render(root, params, ctx) {
  const list = card(null, 'clients-list');
  fill(root, h('h1', null, 'Clients'), list.el);
  ctx.watch('/v1/nodes', (nodes) => {
    nodes = (nodes || []).slice().sort((a, b) => a.Name.localeCompare(b.Name) || a.ID.localeCompare(b.ID));
    fill(list.body, table(['ID', 'Name', 'Address', 'Datacenter', 'Pool', 'Class', 'Status', 'Eligibility', 'Drain'],
      nodes.map((n) => [nodeLink(n.ID, shortId(n.ID)), n.Name, n.Address, n.Datacenter, n.NodePool || 'default',
        n.NodeClass || '', badge(n.Status), badge(n.SchedulingEligibility), n.Drain ? badge('draining') : 'no']),
      'No clients have registered.'));
  });
}
