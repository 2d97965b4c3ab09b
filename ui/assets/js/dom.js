// Building the DOM from elements and text nodes, never from HTML strings:
// every value from the API becomes a text node, so a job named
// "<img onerror=…>" is shown, never run.

// h creates an element. attrs sets properties and attributes (on* keys
// add event listeners; class, id, href, and data-* are attributes);
// children are nodes, strings, numbers, arrays of them, or null/false
// (skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k in el && !k.includes('-') && k !== 'list') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// fill replaces the children of el.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// table builds a table from column headings and rows of cells; empty
// says what an empty table means ("No jobs").
export function table(headings, rows, empty, attrs) {
  if (!rows.length) return h('p', { class: 'muted' }, empty);
  return h('table', attrs,
    h('thead', null, h('tr', null, headings.map((t) => h('th', null, t)))),
    h('tbody', null, rows.map((cells) => h('tr', null, cells.map((c) =>
      c instanceof HTMLTableCellElement ? c : h('td', null, c))))));
}

// facts builds a definition list from [label, value] pairs.
export function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(Boolean).map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

// card is a titled section whose body a page refills on each update.
export function card(title, id) {
  const body = h('div', { id }, h('p', { class: 'muted' }, 'Loading…'));
  return { el: h('section', { class: 'card' }, title ? h('h2', null, title) : null, body), body };
}
