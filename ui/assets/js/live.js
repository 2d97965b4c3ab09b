// Live updates with blocking queries: read once, then ask again with
// ?index=<the last X-Nomad-Index>, which the server holds until something
// changed (or wait passes). Answers without an index (agent members) are
// polled instead. A page's watches end when its AbortSignal aborts, which
// frees the browser's connections (six per origin in HTTP/1.1, so a page
// keeps to a few watches and refreshes the rest when one fires).
//
// This is the one place that knows how the UI learns of changes: moving
// to the event stream (/v1/event/stream) means changing watch only.

import { request } from './api.js';

// A blocking query holds one of the browser's six connections to the
// agent (over plain HTTP/1.1, shared by all its tabs) until something
// changes or WAIT passes, so WAIT bounds how long a page in another tab
// can wait for a free connection.
const WAIT = '30s';
const POLL_MS = 5000;

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

// watch calls onData(data) with path's answer now and after each change,
// and onError(err) when a read fails (then retries with backoff), until
// signal aborts.
export function watch(path, onData, onError, signal) {
  const sep = path.includes('?') ? '&' : '?';
  (async () => {
    let index = 0;
    let backoff = 1000;
    while (!signal.aborted) {
      try {
        const url = index ? `${path}${sep}index=${index}&wait=${WAIT}` : path;
        const ans = await request(url, { signal });
        backoff = 1000;
        const changed = !index || ans.index !== index;
        // An index that goes backwards (a restored server) restarts the
        // watch from scratch rather than waiting for an index never seen.
        index = ans.index > 0 && ans.index >= index ? ans.index : 0;
        if (changed) onData(ans.data);
        if (!index) await sleep(POLL_MS, signal);
      } catch (err) {
        if (signal.aborted) return;
        onError(err);
        index = 0;
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 15000);
      }
    }
  })();
}

// poll calls fn every ms until signal aborts; fn's errors go to onError.
export function poll(fn, ms, onError, signal) {
  (async () => {
    while (!signal.aborted) {
      try { await fn(); } catch (err) { if (!signal.aborted) onError(err); }
      await sleep(ms, signal);
    }
  })();
}
