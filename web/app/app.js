// Lift results app: sign-in, the API client, formatting, the list of tests
// and the router. The page of one test is in test.js.
//
// The token lives in sessionStorage (this tab only, gone when it closes) and
// is sent only in the Authorization header of same-origin /v1 requests. The
// DOM is built with createElement and textContent (the page's CSP enforces
// Trusted Types, so no HTML string ever becomes markup).
'use strict';

const LiftApp = (() => {
  const TOKEN_KEY = 'lift.token';
  // A call that has not answered in timeoutMs is given up with an error the
  // merchant can retry: a hung request otherwise left "Loading…" forever.
  // An object, so the browser tests can shorten it.
  const config = { timeoutMs: 20000 };
  const tokenChanged = []; // callbacks that drop what was read with the previous token
  const main = () => document.getElementById('main');
  let generation = 0; // bumps on every route change; stale loads drop their results

  // h builds an element: h('a', {href: '#/', class: 'x'}, 'text', child…).
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : String(c));
    }
    return el;
  }

  // ---- the token -------------------------------------------------------

  function token() { return sessionStorage.getItem(TOKEN_KEY); }

  function setToken(t) {
    if ((t || null) !== token()) tokenChanged.forEach((f) => f());
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    else sessionStorage.removeItem(TOKEN_KEY);
    document.getElementById('signout').hidden = !t;
  }

  // takeTokenFromURL moves a token from `#token=…` (what `lift dev` prints)
  // into sessionStorage and off the address bar and the history, so it is
  // not left in the tab's URL. `&test=<id>` opens that test. route() calls
  // it on every change of the hash: a link opened in a tab where the app is
  // already open is a same-document navigation (no DOMContentLoaded), and
  // it must still sign in with its token, replacing the tab's current one.
  function takeTokenFromURL() {
    if (!location.hash.startsWith('#token=')) return;
    const p = new URLSearchParams(location.hash.slice(1));
    const t = (p.get('token') || '').trim();
    if (t) setToken(t);
    const test = p.get('test');
    const next = test && /^[0-9]+$/.test(test) ? '#/tests/' + test : '#/';
    history.replaceState(null, '', location.pathname + location.search + next);
  }

  // ---- the API -----------------------------------------------------------

  class APIError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  // api calls the v1 API of this origin: only ever a path under /v1, so the
  // token goes nowhere else. Answers {status, data}; a non-2xx throws an
  // APIError with the answer in plain words.
  async function api(method, path, body, headers) {
    const t = token();
    if (!t) throw new APIError(401, 'missing_token', 'Sign in with an API token first.');
    const init = {
      method,
      headers: Object.assign({ Authorization: 'Bearer ' + t, Accept: 'application/json' }, headers || {}),
      credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer',
      signal: AbortSignal.timeout(config.timeoutMs), // covers reading the body too
    };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res, text;
    try {
      res = await fetch('/v1' + path, init);
      text = await res.text();
    } catch (e) {
      if (e && e.name === 'TimeoutError') {
        throw new APIError(0, 'timeout', 'Lift did not answer in ' + Math.round(config.timeoutMs / 1000) + ' seconds. Try again in a moment.');
      }
      throw new APIError(0, 'network', 'Lift could not be reached. Check your connection and try again.');
    }
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch (e) { data = null; }
    }
    if (!res.ok) throw explain(res, data);
    return { status: res.status, data };
  }

  // explain turns an error answer into a sentence a merchant can act on.
  function explain(res, data) {
    const e = (data && data.error) || {};
    const code = e.code || '';
    const said = e.message ? ' (' + e.message.replace(/\.$/, '') + ')' : '';
    let msg;
    switch (true) {
      case res.status === 401:
        msg = code === 'token_revoked'
          ? 'This token was revoked in the admin panel. Create a new one and sign in again.'
          : 'This token was not accepted' + said + '. Check it and sign in again.';
        break;
      case code === 'insufficient_scope':
        msg = 'This token is not allowed to read tests. Use a token with the read_experiments scope.';
        break;
      case code === 'api_access_disabled':
        msg = 'The API is not enabled for this shop yet. Contact support to enable it.';
        break;
      case res.status === 403:
        msg = 'This shop cannot do that on its plan' + said + '.';
        break;
      case code === 'experiment_not_found':
        msg = 'This test does not exist in your shop.';
        break;
      case code === 'results_not_available':
        msg = 'No results yet: this test has not started. Results appear once it runs.';
        break;
      case code === 'export_not_available':
        msg = 'Nothing to export yet: this test has not run.';
        break;
      case res.status === 429: {
        const wait = Number(res.headers.get('Retry-After'));
        msg = 'Too many requests for now. Try again in ' + (wait > 0 ? wait + ' seconds.' : 'a minute.');
        break;
      }
      case res.status >= 500:
        msg = 'Lift could not answer just now; nothing was changed. Try again in a moment.' +
          (e.request_id ? ' (Reference: ' + e.request_id + ')' : '');
        break;
      default:
        msg = e.message || 'Lift answered with an unexpected status ' + res.status + '.';
    }
    return new APIError(res.status, code, msg);
  }

  // poll reads path until done(data) or the time runs out, waiting a little
  // longer each time: custom queries and exports are computed by a worker.
  // With gen, it gives up (answering null) once the page has moved on.
  async function poll(path, done, gen) {
    let wait = 500;
    const until = Date.now() + 120000;
    for (;;) {
      const { data } = await api('GET', path);
      if (gen !== undefined && gen !== generation) return null;
      if (done(data)) return data;
      if (Date.now() > until) throw new APIError(0, 'timeout', 'This is taking longer than usual. Try again in a few minutes.');
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 1.5, 3000);
    }
  }

  // ---- formatting ------------------------------------------------------

  const intFmt = new Intl.NumberFormat('en-US');
  const fmt = {
    int: (n) => (n === null || n === undefined ? '–' : intFmt.format(n)),
    pct: (x, digits = 2) => (x === null || x === undefined ? '–' : (x * 100).toFixed(digits) + '%'),
    // A chance is never shown as a certainty: 0.99996 is "> 99.9%".
    prob: (p) => (p === null || p === undefined ? '–' : p >= 0.9995 ? '> 99.9%' : p <= 0.0005 ? '< 0.1%' : (p * 100).toFixed(1) + '%'),
    lift: (x) => (x === null || x === undefined ? '–' : (x > 0 ? '+' : '') + (x * 100).toFixed(1) + '%'),
    money(m) {
      if (!m || m.amount === undefined) return '–';
      try {
        return new Intl.NumberFormat('en-US', { style: 'currency', currency: m.currency }).format(Number(m.amount));
      } catch (e) {
        return m.amount + ' ' + m.currency;
      }
    },
    // Times are the viewer's, named ("GMT+9"): beside them, date ranges are
    // the shop's calendar days, and an unnamed zone made the two disagree.
    date(s) {
      if (!s) return '–';
      const d = new Date(s);
      return isNaN(d) ? s : d.toLocaleString('en-US', { year: 'numeric', month: 'short', day: 'numeric',
        hour: 'numeric', minute: '2-digit', timeZoneName: 'short' });
    },
    time(s) {
      const d = new Date(s);
      return isNaN(d) ? s : d.toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit', timeZoneName: 'short' });
    },
    days: (r) => r.gte + ' to ' + r.lte + ' (the shop\'s days)',
  };

  // ---- views -------------------------------------------------------------

  // show replaces the page. The first page of a route with a heading moves
  // the keyboard focus to it: the link that led here is gone, and focus
  // would fall back to <body>, where a screen reader user hears nothing.
  let focusHeading = false;
  function show(...nodes) {
    main().replaceChildren(...nodes.filter((n) => n !== null && n !== undefined && n !== false));
    const h1 = focusHeading && main().querySelector('h1');
    if (h1) {
      focusHeading = false;
      h1.tabIndex = -1;
      h1.focus({ preventScroll: true });
    }
  }

  function errorBox(err) {
    return h('p', { class: 'error', role: 'alert' }, err instanceof APIError ? err.message : 'Something went wrong: ' + err);
  }

  function signIn(message) {
    setToken(null);
    const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true });
    // POST, so that even without the script's handler a token never lands in a URL.
    const form = h('form', { id: 'signin', class: 'card signin', method: 'post' },
      h('h1', {}, 'Sign in'),
      h('p', {}, 'Paste a Lift API token with read access (read_experiments). It stays in this browser tab and is sent only to this Lift server.'),
      h('label', { for: 'token' }, 'API token'),
      h('div', { class: 'row' }, input, h('button', { type: 'submit' }, 'Sign in')),
      message ? h('p', { class: 'error', role: 'alert' }, message) : null);
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const t = input.value.trim();
      if (!t) return;
      setToken(t);
      if (location.hash === '#/' || location.hash === '') route();
      else location.hash = '#/';
    });
    show(form);
    input.focus();
  }

  // again offers what to do after an error: on the list a "Try again" link
  // (there '#/' is no change of hash, so the link reloads it by hand);
  // elsewhere a "Try again" button that reloads the page and a way back.
  function again() {
    const onList = location.hash === '#/' || location.hash === '';
    const back = h('a', { href: '#/' }, onList ? 'Try again' : '← All tests');
    back.addEventListener('click', (ev) => {
      if (location.hash === '#/' || location.hash === '') { ev.preventDefault(); route(); }
    });
    const retry = onList ? null : h('button', { type: 'button', class: 'quiet', id: 'retry', onclick: () => route() }, 'Try again');
    return h('p', { class: 'row again' }, retry, back);
  }

  // failed shows err; an unaccepted token goes back to the sign-in form.
  function failed(err, gen) {
    if (gen !== generation) return;
    if (err instanceof APIError && err.status === 401) {
      signIn(err.message);
      return;
    }
    show(errorBox(err), again());
  }

  const statusWords = { draft: 'Draft', preview: 'Preview', active: 'Running', paused: 'Paused', ended: 'Closed', failed: 'Failed', archived: 'Archived' };

  function badge(text, kind) {
    return h('span', { class: 'badge ' + (kind || '') }, text);
  }

  async function list(gen) {
    const ul = h('ul', { class: 'tests', id: 'tests' });
    const more = h('button', { type: 'button', class: 'quiet', hidden: true }, 'Show more tests');
    show(h('h1', {}, 'Your tests'), ul, more);
    let cursor = null;
    const load = async () => {
      const q = new URLSearchParams({ limit: '50', include: 'results_summary' });
      if (cursor) q.set('cursor', cursor);
      const { data } = await api('GET', '/experiments?' + q);
      if (gen !== generation) return;
      for (const t of data.data || []) ul.append(listItem(t));
      if (!ul.children.length) ul.append(h('li', { class: 'muted' }, 'This shop has no tests yet.'));
      cursor = data.next_cursor || null;
      more.hidden = !cursor;
    };
    more.addEventListener('click', () => load().catch((e) => failed(e, gen)));
    await load();
  }

  function listItem(t) {
    const s = t.results_summary;
    let verdict = null;
    // A control win has the test page's words and colour ("The control
    // wins", red): a green "Winner: Control" read as a success.
    if (s && s.outcome === 'winner' && s.winning_test_group_index === 0) {
      verdict = badge('The control wins', 'bad');
    } else if (s && s.outcome === 'winner') {
      const g = (t.test_groups || []).find((x) => x.index === s.winning_test_group_index);
      verdict = badge('Winner: ' + (g ? g.name : 'group ' + s.winning_test_group_index), 'good');
    } else if (s) {
      verdict = badge(s.outcome === 'insufficient_data' ? 'Collecting data' : 'No winner yet', 'neutral');
    }
    return h('li', {},
      h('a', { href: '#/tests/' + t.id, dataset: { testId: t.id } },
        h('span', { class: 'name' }, t.name),
        h('span', { class: 'meta' }, badge(statusWords[t.status] || t.status, t.status), ' ', t.type.replace('_', ' '),
          t.started_at ? ' · started ' + fmt.date(t.started_at) : ''),
        verdict));
  }

  // ---- the router ----------------------------------------------------------

  const views = {};

  async function route() {
    const gen = ++generation;
    focusHeading = true;
    takeTokenFromURL();
    if (!token()) {
      signIn();
      return;
    }
    document.getElementById('signout').hidden = false;
    const m = location.hash.match(/^#\/tests\/([0-9]+)$/);
    try {
      if (m && views.test) await views.test(m[1], gen);
      else await list(gen);
    } catch (err) {
      failed(err, gen);
    }
  }

  document.addEventListener('DOMContentLoaded', () => {
    document.getElementById('signout').addEventListener('click', () => {
      generation++;
      history.replaceState(null, '', location.pathname + location.search + '#/');
      signIn();
    });
    window.addEventListener('hashchange', route);
    route();
  });

  return { h, api, poll, fmt, badge, statusWords, show, errorBox, failed, again, views, APIError, config,
    onTokenChange: (f) => tokenChanged.push(f), isCurrent: (gen) => gen === generation };
})();
