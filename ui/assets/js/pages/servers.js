// The servers of the region and which one leads. Members carry no raft
// index, so this page polls.

import { get } from '../api.js';
import { card, fill, h, table } from '../dom.js';
import { badge } from '../format.js';

export const title = 'Servers';

export function render(root, params, ctx) {
  const list = card(null, 'servers-list');
  fill(root, h('h1', null, 'Servers'), list.el);
  ctx.poll(async () => {
    const m = await get('/v1/agent/members', ctx.signal);
    const members = ((m && m.Members) || []).slice().sort((a, b) => a.Name.localeCompare(b.Name));
    fill(list.body, table(['Name', 'Address', 'Port', 'Status', 'Leader', 'Datacenter', 'Region', 'Version'],
      members.map((s) => {
        const t = s.Tags || {};
        return [s.Name, s.Addr, s.Port, badge(s.Status), t.leader === 'true' ? badge('leader') : '', t.dc, t.region, t.build];
      }), 'No servers answered.'));
  }, 5000);
}
