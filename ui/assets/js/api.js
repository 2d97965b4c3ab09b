// The HTTP API as the UI uses it: every request carries the ACL token the
// user saved (X-Nomad-Token), and a refusal becomes an ApiError whose
// message says what to do.

const TOKEN_KEY = 'drover.acl.token';

export function token() {
  try { return localStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}

export function setToken(secret) {
  if (secret) localStorage.setItem(TOKEN_KEY, secret);
  else localStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(status, text, path) {
    super(describe(status, text, path));
    this.status = status;
    this.text = text;
    this.path = path;
  }
}

function describe(status, text, path) {
  if (status === 403) {
    return `Permission denied for ${path}: ${token() ? 'the saved ACL token does not allow this' :
      'ACLs are on and no token is saved'}${text && text !== 'Permission denied' ? ` (${text})` : ''}. ` +
      'Enter a token whose policy allows it in the "ACL token" field at the top of the page.';
  }
  if (status === 404) return `Not found: ${text || path}`;
  return `${path} answered ${status}: ${text || 'no message'}`;
}

function headers(json) {
  const hd = {};
  const t = token();
  if (t) hd['X-Nomad-Token'] = t;
  if (json) hd['Content-Type'] = 'application/json';
  return hd;
}

// request calls the API and answers {data, index}: the decoded JSON and
// the X-Nomad-Index of a read (0 when the answer has none).
export async function request(path, { method = 'GET', body, signal } = {}) {
  const resp = await fetch(path, {
    method, signal, cache: 'no-store', credentials: 'same-origin',
    headers: headers(body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await resp.text();
  if (!resp.ok) throw new ApiError(resp.status, text.trim(), path.split('?')[0]);
  return { data: text ? JSON.parse(text) : null, index: Number(resp.headers.get('X-Nomad-Index') || 0) };
}

export async function get(path, signal) {
  return (await request(path, { signal })).data;
}

export async function put(path, body, signal) {
  return (await request(path, { method: 'PUT', body, signal })).data;
}

// stream calls a streaming endpoint (followed logs) and hands each
// decoded chunk of text to onText until the answer ends or signal aborts.
export async function stream(path, onText, signal) {
  const resp = await fetch(path, { signal, cache: 'no-store', headers: headers(false) });
  if (!resp.ok) throw new ApiError(resp.status, (await resp.text()).trim(), path.split('?')[0]);
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    onText(value);
  }
}

// q builds a query string from an object, leaving out empty values.
export function q(params) {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') s.set(k, v);
  const str = s.toString();
  return str ? `?${str}` : '';
}
