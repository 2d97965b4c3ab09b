// The application shell: routes the URL to a page module, keeps the
// navigation and the ACL token field, and gives each page a context whose
// watches end when the user leaves the page.

import { fill, h } from './dom.js';
import { get, setToken, token } from './api.js';
import { poll, watch } from './live.js';
import * as jobs from './pages/jobs.js';
import * as job from './pages/job.js';
import * as alloc from './pages/alloc.js';
import * as clients from './pages/clients.js';
import * as client from './pages/client.js';
import * as servers from './pages/servers.js';
import * as evals from './pages/evals.js';

// The URL paths of Nomad's UI, so links printed by the CLI land here.
const routes = [
  [/^\/ui\/jobs\/?$/, jobs, 'jobs'],
  [/^\/ui\/jobs\/([^/]+)(?:\/.*)?$/, job, 'jobs'],
  [/^\/ui\/allocations\/([^/]+)(?:\/.*)?$/, alloc, 'jobs'],
  [/^\/ui\/clients\/?$/, clients, 'clients'],
  [/^\/ui\/clients\/([^/]+)(?:\/.*)?$/, client, 'clients'],
  [/^\/ui\/servers\/?$/, servers, 'servers'],
  [/^\/ui\/servers\/[^/]+\/?$/, servers, 'servers'],
  [/^\/ui\/evaluations\/?$/, evals, 'evaluations'],
];

const page = document.getElementById('page');
const banner = document.getElementById('banner');
let current = null; // the AbortController of the page on screen

// showError puts a message above the page (or clears it with null).
function showError(err) {
  if (!err) { banner.hidden = true; banner.textContent = ''; return; }
  banner.hidden = false;
  banner.className = 'banner error';
  banner.textContent = err.message || String(err);
}

function notFound(path) {
  return { title: 'Not found', render: (root) => fill(root, h('h1', null, 'Page not found'),
    h('p', null, `Nothing lives at ${path}. `, h('a', { href: '/ui/jobs' }, 'Go to the jobs.'))) };
}

// decode reads a path segment; a malformed escape is kept as typed (the
// API then answers that nothing has that ID) instead of breaking the page.
function decode(s) {
  try { return decodeURIComponent(s); } catch { return s; }
}

function route() {
  if (current) current.abort();
  current = new AbortController();
  const { signal } = current;
  showError(null);
  let path = location.pathname;
  if (path === '/ui' || path === '/ui/') {
    history.replaceState(null, '', '/ui/jobs');
    path = '/ui/jobs';
  }
  let mod = notFound(path);
  let params = [];
  let section = '';
  for (const [re, m, sec] of routes) {
    const match = re.exec(path);
    if (match) { mod = m; params = match.slice(1).map(decode); section = sec; break; }
  }
  for (const a of document.querySelectorAll('.top nav a')) a.classList.toggle('active', a.dataset.section === section);
  document.title = `${mod.title || 'Drover'} · Drover`;
  // Errors of different watches are kept apart so that one recovering
  // does not hide another that still fails.
  const failing = new Map();
  const report = (key, err) => {
    if (signal.aborted) return;
    if (err) failing.set(key, err); else failing.delete(key);
    showError(failing.size ? failing.values().next().value : null);
  };
  const ctx = {
    signal,
    params,
    query: new URLSearchParams(location.search),
    error: (err) => report('action', err),
    watch: (path, onData) => watch(path, (data) => { report(path, null); if (!signal.aborted) onData(data); },
      (err) => report(path, err), signal),
    poll: (fn, ms) => poll(async () => { await fn(); report(fn, null); }, ms, (err) => report(fn, err), signal),
  };
  page.replaceChildren();
  try {
    mod.render(page, params, ctx);
  } catch (err) {
    showError(err);
  }
}

// In-app navigation: a click on a link below /ui/ changes the page
// without a reload.
document.addEventListener('click', (e) => {
  const a = e.target.closest('a');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/ui/') || a.target) return;
  e.preventDefault();
  if (url.pathname + url.search !== location.pathname + location.search) history.pushState(null, '', url);
  route();
});
window.addEventListener('popstate', route);

// The token field: saved in localStorage and sent with every request.
const form = document.getElementById('token-form');
const input = document.getElementById('token-input');
const status = document.getElementById('token-status');

async function showToken() {
  if (!token()) { status.textContent = 'no token'; return; }
  status.textContent = 'token saved';
  try {
    const self = await get('/v1/acl/token/self');
    status.textContent = self && self.Name ? `as ${self.Name}` : 'token saved';
  } catch {
    // ACLs off, or a token the servers do not know: the pages say so.
  }
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  setToken(input.value.trim());
  input.value = '';
  showToken();
  route();
});
document.getElementById('token-clear').addEventListener('click', () => {
  setToken('');
  input.value = '';
  showToken();
  route();
});

showToken();
route();
