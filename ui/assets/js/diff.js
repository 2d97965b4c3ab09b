// A job version's diff in words: the JobDiff of /v1/job/:id/versions?diffs=true
// as lines marked + (added), - (deleted) and ~ (edited), leaving out what
// did not change.

import { h } from './dom.js';

const marks = { Added: ['+', 'add'], Deleted: ['-', 'del'], Edited: ['~', 'edit'] };

function fieldLine(f, depth) {
  const [mark, cls] = marks[f.Type] || [' ', ''];
  let text;
  if (f.Type === 'Added') text = `${f.Name}: ${f.New}`;
  else if (f.Type === 'Deleted') text = `${f.Name}: ${f.Old}`;
  else text = `${f.Name}: ${JSON.stringify(f.Old)} => ${JSON.stringify(f.New)}`;
  const notes = (f.Annotations || []).length ? ` (${f.Annotations.join(', ')})` : '';
  return h('div', { class: cls }, `${'  '.repeat(depth)}${mark} ${text}${notes}`);
}

function objectLines(kind, o, depth, out) {
  if (!o || o.Type === 'None') return;
  const [mark, cls] = marks[o.Type] || [' ', ''];
  const name = o.Name ? `${kind} "${o.Name}"` : kind;
  const notes = (o.Annotations || []).length ? ` (${o.Annotations.join(', ')})` : '';
  out.push(h('div', { class: cls }, `${'  '.repeat(depth)}${mark} ${name}${notes}`));
  for (const f of o.Fields || []) if (f.Type !== 'None') out.push(fieldLine(f, depth + 1));
  for (const sub of o.Objects || []) objectLines(sub.Name || 'block', { ...sub, Name: '' }, depth + 1, out);
  for (const t of o.Tasks || []) objectLines('task', t, depth + 1, out);
}

// render answers the lines of diff d, or a note that nothing changed.
export function render(d) {
  const out = [];
  if (d) {
    for (const f of d.Fields || []) if (f.Type !== 'None') out.push(fieldLine(f, 0));
    for (const o of d.Objects || []) objectLines(o.Name || 'block', { ...o, Name: '' }, 0, out);
    for (const tg of d.TaskGroups || []) {
      objectLines('group', tg, 0, out);
      for (const [kind, n] of Object.entries(tg.Updates || {})) {
        if (n) out.push(h('div', { class: 'muted' }, `    ${n} ${kind}`));
      }
    }
  }
  if (!out.length) return h('p', { class: 'muted' }, 'No changes to the job specification.');
  return h('div', { class: 'diff mono' }, out);
}
