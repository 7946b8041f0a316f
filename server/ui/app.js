// AIRS attention UI: the page's script. No framework, no inline code (the
// page's CSP allows only this file); every text goes in with textContent.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const MAX_CALLS = 20;
  const MAX_RESULTS = 10;
  const TITLE = 'AIRS attention';
  let csrf = '';
  let snapshots = 0;
  const cards = new Map(); // recommendation id → {rec, li}

  // el builds an element: attrs are attributes (on* never), children are
  // nodes or strings (text).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) {
      if (c === undefined || c === null) continue;
      e.append(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return e;
  }

  function announce(msg) {
    $('live').textContent = msg;
  }

  function ago(ts) {
    const s = Math.max(0, Math.round((Date.now() - Date.parse(ts)) / 1000));
    if (s < 5) return 'just now';
    if (s < 60) return s + ' s ago';
    const m = Math.round(s / 60);
    if (m < 60) return m + ' min ago';
    return Math.round(m / 60) + ' h ago';
  }

  function refreshAges() {
    for (const t of document.querySelectorAll('time[data-ago]')) t.textContent = ago(t.dateTime);
  }

  function latency(ns) {
    const ms = ns / 1e6;
    if (ms < 1) return (ns / 1e3).toFixed(0) + ' µs';
    if (ms < 1000) return ms.toFixed(ms < 10 ? 1 : 0) + ' ms';
    return (ms / 1000).toFixed(1) + ' s';
  }

  function pretty(v) {
    try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); }
  }

  async function api(method, url, body) {
    const opts = { method, credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf } };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    const r = await fetch(url, opts);
    if (r.status === 401) {
      location.assign('/ui/signin');
      throw new Error('signed out');
    }
    let data = null;
    try { data = await r.json(); } catch (e) { /* not JSON */ }
    return { status: r.status, ok: r.ok, data: data || {} };
  }

  // ---- suggestions ----

  function updateCount() {
    const n = cards.size;
    $('count').textContent = String(n);
    $('count').setAttribute('aria-label', n === 1 ? '1 suggestion' : n + ' suggestions');
    $('cards-empty').hidden = n > 0;
    document.title = n > 0 ? '(' + n + ') ' + TITLE : TITLE;
  }

  function renderCard(rec) {
    const tid = 'card-' + rec.id + '-tool';
    const signals = el('ul', { class: 'signals' });
    for (const s of rec.signals || []) {
      signals.append(el('li', {}, s.signal + ' ' + Number(s.score).toFixed(2) + (s.why ? ' — ' + s.why : '')));
    }
    const acceptBtn = el('button', { type: 'button', class: 'accept', 'aria-label': 'Accept ' + rec.tool }, 'Accept');
    const dismissBtn = el('button', { type: 'button', class: 'dismiss quiet', 'aria-label': 'Dismiss ' + rec.tool }, 'Dismiss');
    acceptBtn.addEventListener('click', () => accept(rec.id));
    dismissBtn.addEventListener('click', () => dismiss(rec.id));
    const li = el('li', { class: 'card', 'data-id': rec.id, 'data-tool': rec.tool },
      el('article', { 'aria-labelledby': tid },
        el('header', {},
          el('h3', { id: tid }, rec.tool),
          el('span', { class: 'provider' }, 'by ' + rec.provider),
          el('span', { class: 'age' }, 'suggested ', el('time', { datetime: rec.created, 'data-ago': true }, ago(rec.created)))),
        el('p', { class: 'reason' }, rec.reason || ''),
        el('dl', {},
          el('dt', {}, 'Arguments'), el('dd', {}, el('pre', { class: 'args' }, pretty(rec.arguments))),
          el('dt', {}, 'Signals'), el('dd', {}, signals)),
        rec.destructive ? el('p', { class: 'warn' }, 'Destructive: you confirm it before it runs.') : null,
        el('div', { class: 'row actions' }, acceptBtn, dismissBtn)));
    return li;
  }

  function addCard(rec, quiet) {
    if (cards.has(rec.id)) return;
    const li = renderCard(rec);
    $('cards').append(li); // appended: nothing moves under the user
    cards.set(rec.id, { rec, li });
    updateCount();
    if (!quiet) announce('New suggestion: ' + rec.tool + (rec.reason ? '. ' + rec.reason : ''));
  }

  // removeCard takes a card out; focus inside it goes to the next card (or
  // the heading), so a keyboard user is not dropped at the top.
  function removeCard(id, why) {
    const c = cards.get(id);
    if (!c) { // the stream's event took it out first
      if (why) announce(why);
      return;
    }
    cards.delete(id);
    // A busy card's buttons are disabled, which drops their focus: keep
    // it if the user acted from inside the card.
    const hadFocus = c.li.contains(document.activeElement) || c.focused;
    const next = c.li.nextElementSibling || c.li.previousElementSibling;
    c.li.remove();
    updateCount();
    if (hadFocus) {
      const b = next && next.querySelector('button.accept');
      (b || $('suggestions-h')).focus();
    }
    if (why) announce(why);
  }

  function busy(c, on) {
    if (on) c.focused = c.li.contains(document.activeElement);
    for (const b of c.li.querySelectorAll('button')) b.disabled = on;
    c.li.setAttribute('aria-busy', on ? 'true' : 'false');
  }

  function askConfirm(rec) {
    const d = $('confirm');
    $('confirm-tool').textContent = rec.tool;
    $('confirm-args').textContent = pretty(rec.arguments);
    return new Promise((resolve) => {
      const onClose = () => {
        d.removeEventListener('close', onClose);
        resolve(d.returnValue === 'run');
      };
      d.returnValue = '';
      d.addEventListener('close', onClose);
      d.showModal();
      $('confirm-cancel').focus();
    });
  }

  async function accept(id) {
    const c = cards.get(id);
    if (!c) return;
    const rec = c.rec;
    const accBtn = c.li.querySelector('button.accept');
    let confirmed = false;
    if (rec.destructive) {
      confirmed = await askConfirm(rec);
      if (!confirmed) {
        announce('Not run: ' + rec.tool);
        if (accBtn.isConnected) accBtn.focus();
        return;
      }
    }
    busy(c, true);
    let r;
    try {
      r = await api('POST', '/ui/api/recommendations/' + encodeURIComponent(id) + '/accept', { confirmed });
      if (r.ok && r.data.ran === false && r.data.confirm) {
        // The server wants a confirmation the page did not know was needed.
        if (!(await askConfirm(rec))) {
          removeCard(id, 'Not run: ' + rec.tool);
          return;
        }
        confirmed = true;
        r = await callAs(r.data.confirm);
      }
      if (r.status === 428 && r.data.confirmation && confirmed) {
        r = await heldCall(r, { tool: rec.tool, provider: rec.provider, arguments: rec.arguments });
      }
    } catch (e) {
      busy(c, false);
      if (c.focused) accBtn.focus();
      announce('Accept failed: ' + e.message);
      return;
    }
    showResult(rec.tool, r, c.focused || c.li.contains(document.activeElement));
    c.focused = false; // the result has the focus now
    removeCard(id);
  }

  // callAs runs a call from the page, its answer shaped like accept's.
  async function callAs(call) {
    const r = await api('POST', '/ui/api/call', call);
    if (r.ok) r.data = { ran: true, result: r.data };
    return r;
  }

  // heldCall: the guard held a call the user just confirmed in the page.
  // A reviewer's confirmation is the guard's answer too (approve once, then
  // the same call again); anyone else's call waits in the review queue for
  // a reviewer.
  async function heldCall(r, call) {
    const id = r.data.confirmation.id;
    if (guard && guard.reviewer) {
      const a = await api('POST', '/ui/api/reviews/' + encodeURIComponent(id) + '/approve');
      if (a.ok) return callAs(call);
    }
    refreshReviews();
    return r;
  }

  async function dismiss(id) {
    const c = cards.get(id);
    if (!c) return;
    busy(c, true);
    const r = await api('POST', '/ui/api/recommendations/' + encodeURIComponent(id) + '/dismiss');
    if (r.ok || r.status === 404) {
      removeCard(id, 'Dismissed ' + c.rec.tool);
    } else {
      busy(c, false);
      if (c.focused) c.li.querySelector('button.dismiss').focus();
      announce('Dismiss failed: ' + (r.data.message || r.status));
    }
  }

  function showResult(tool, r, focus) {
    const ok = r.ok && r.data.result && r.data.result.outcome === 'ok';
    let body;
    if (r.ok && r.data.result) {
      body = pretty(r.data.result.output);
    } else {
      body = (r.data.message || ('HTTP ' + r.status)) + (r.data.hint ? '\n' + r.data.hint : '');
    }
    const what = ok ? 'ok' : (r.data.error || (r.data.result && r.data.result.outcome) || 'failed');
    const li = el('li', { class: ok ? 'ok' : 'error', tabindex: '-1', 'data-tool': tool, 'data-outcome': what },
      el('h3', {}, tool + ': ' + what),
      el('pre', { class: 'output' }, body));
    const list = $('results');
    list.prepend(li);
    while (list.children.length > MAX_RESULTS) list.lastElementChild.remove();
    $('results-empty').hidden = true;
    announce(tool + (ok ? ' ran: ok' : ' failed: ' + what));
    if (focus) li.focus();
  }

  // ---- recent calls, breakers ----

  function addCall(ev) {
    const tb = $('calls');
    const outcome = ev.outcome === 'ok' ? 'ok' : (ev.error_kind || ev.outcome);
    const tr = el('tr', { 'data-call': ev.call_id },
      el('td', {}, ev.tool),
      el('td', {}, ev.caller),
      el('td', { class: 'outcome-' + ev.outcome }, outcome),
      el('td', { class: 'num' }, latency(ev.latency_ns)),
      el('td', {}, el('time', { datetime: ev.at, 'data-ago': true }, ago(ev.at))));
    tb.prepend(tr);
    while (tb.children.length > MAX_CALLS) tb.lastElementChild.remove();
    $('calls-table').hidden = false;
    $('calls-empty').hidden = true;
  }

  function setBreakers(list) {
    const ul = $('breakers');
    ul.replaceChildren();
    for (const b of list || []) {
      const label = b.state === 'degraded' ? 'degraded (open)' : b.state === 'half_open' ? 'half-open' : 'closed';
      ul.append(el('li', { 'data-tool': b.tool },
        el('span', {}, b.tool + ' ', el('span', { class: 'small' }, b.provider + ' ' + b.version)),
        el('span', { class: 'state ' + b.state }, label)));
    }
    $('breakers-empty').hidden = ul.children.length > 0;
  }

  // ---- the guard's review queue ----

  let guard = null; // {reviewer, reviews} or null: the guard is off

  function setGuard(g) {
    guard = g;
    const ul = $('reviews');
    const had = ul.contains(document.activeElement);
    ul.replaceChildren();
    const note = $('review-note');
    if (!g) {
      note.textContent = 'The guard is off: destructive calls run without a confirmation.';
      $('review-empty').hidden = true;
      $('review-count').textContent = '0';
      return;
    }
    note.textContent = g.reviewer
      ? 'You review: a held call runs once you approve it and it is sent again.'
      : 'Your calls that wait for a reviewer (guard.reviewers) or `airs review`.';
    const list = g.reviews || [];
    for (const rv of list) ul.append(renderReview(rv, g.reviewer));
    $('review-count').textContent = String(list.length);
    $('review-empty').hidden = list.length > 0;
    if (had) $('review-h').focus();
  }

  function renderReview(rv, reviewer) {
    const hid = 'review-' + rv.id + '-h';
    const what = rv.kind === 'confirm' ? 'waits for a confirmation' : 'ran; queued for review';
    const args = rv.params_cut ? '(arguments over 4 KiB)' : pretty(rv.params);
    const li = el('li', { class: 'review ' + rv.kind, 'data-id': rv.id, 'data-tool': rv.tool },
      el('article', { 'aria-labelledby': hid },
        el('h3', { id: hid }, rv.caller + ' → ' + rv.tool),
        el('p', { class: 'small' }, what + ', asked ', el('time', { datetime: rv.created, 'data-ago': true }, ago(rv.created)),
          rv.expires ? ', expires ' + new Date(rv.expires).toLocaleTimeString() : ''),
        el('pre', { class: 'args' }, args)));
    if (reviewer) {
      const row = el('div', { class: 'row actions' });
      const btn = (label, cls, f) => {
        const b = el('button', { type: 'button', class: cls, 'aria-label': label + ': ' + rv.caller + ' → ' + rv.tool }, label);
        b.addEventListener('click', f);
        row.append(b);
      };
      if (rv.kind === 'confirm') {
        btn('Allow once', 'approve', () => decide(rv, 'approve', false));
        btn('Always for this agent', 'always quiet', () => decide(rv, 'approve', true));
        btn('Deny', 'deny danger', () => decide(rv, 'deny', false));
      } else {
        btn('Looks fine', 'approve', () => decide(rv, 'approve', false));
        btn('Flag', 'deny danger', () => decide(rv, 'deny', false));
      }
      li.querySelector('article').append(row);
    }
    return li;
  }

  async function decide(rv, action, always) {
    const li = $('reviews').querySelector('li[data-id="' + CSS.escape(rv.id) + '"]');
    if (li) for (const b of li.querySelectorAll('button')) b.disabled = true;
    const r = await api('POST', '/ui/api/reviews/' + encodeURIComponent(rv.id) + '/' + action, always ? { always: true } : undefined);
    const done = r.ok ? (r.data.review ? r.data.review.status : action) : (r.data.message || ('HTTP ' + r.status));
    announce(rv.tool + ' for ' + rv.caller + ': ' + done);
    await refreshReviews();
  }

  async function refreshReviews() {
    if (!guard) return;
    try {
      const r = await api('GET', '/ui/api/reviews');
      if (r.ok) setGuard({ reviewer: r.data.reviewer, reviews: r.data.reviews });
    } catch (e) { /* the stream's reconnect handles a lost session */ }
  }

  // ---- the event stream ----

  function setConn(state, text) {
    const c = $('conn');
    c.className = 'conn ' + state;
    c.textContent = text;
  }

  function onSnapshot(d) {
    snapshots++;
    const keep = new Set((d.recommendations || []).map((r) => r.id));
    for (const id of [...cards.keys()]) if (!keep.has(id)) removeCard(id);
    const fresh = [];
    for (const rec of d.recommendations || []) {
      if (!cards.has(rec.id)) fresh.push(rec);
      addCard(rec, true);
    }
    if (snapshots > 1 && fresh.length > 0) {
      announce(fresh.length === 1 ? 'New suggestion: ' + fresh[0].tool : fresh.length + ' new suggestions');
    }
    $('calls').replaceChildren();
    for (const ev of d.calls || []) addCall(ev);
    if (!(d.calls || []).length) {
      $('calls-table').hidden = true;
      $('calls-empty').hidden = false;
    }
    setBreakers(d.breakers);
    setGuard(d.guard || null);
  }

  function connect() {
    const es = new EventSource('/ui/api/events');
    const on = (name, f) => es.addEventListener(name, (e) => {
      let d;
      try { d = JSON.parse(e.data); } catch (err) { return; }
      f(d);
    });
    es.addEventListener('open', () => setConn('live', 'live'));
    on('snapshot', onSnapshot);
    on('new', (rec) => addCard(rec, false));
    on('accepted', (rec) => removeCard(rec.id));
    on('dismissed', (rec) => removeCard(rec.id));
    on('expired', (rec) => removeCard(rec.id, cards.has(rec.id) ? 'Suggestion expired: ' + rec.tool : ''));
    on('call', (ev) => {
      addCall(ev);
      if (ev.error_kind === 'intent_verification_required' || (guard && ev.error_kind === 'intent_misaligned')) refreshReviews();
    });
    on('breakers', (d) => setBreakers(d.breakers));
    es.addEventListener('error', () => {
      setConn('down', 'reconnecting…');
      if (es.readyState !== EventSource.CLOSED) return; // the browser retries by itself
      es.close();
      fetch('/ui/api/session', { credentials: 'same-origin' }).then((r) => {
        if (r.status === 401) location.assign('/ui/signin');
        else setTimeout(connect, 2000);
      }, () => setTimeout(connect, 2000));
    });
  }

  // ---- task, sign-out, start ----

  async function setTask(text) {
    const st = $('task-status');
    st.textContent = 'Saving…';
    const r = await api('PUT', '/ui/api/context', { task: text });
    st.textContent = r.ok ? (text ? 'Task set.' : 'Task cleared.') : 'Not saved: ' + (r.data.message || r.status);
  }

  function wire() {
    $('task-form').addEventListener('submit', (e) => {
      e.preventDefault();
      setTask($('task').value.trim());
    });
    $('task-clear').addEventListener('click', () => {
      $('task').value = '';
      setTask('');
    });
    $('signout').addEventListener('click', async () => {
      try { await api('POST', '/ui/api/signout'); } finally { location.assign('/ui/signin'); }
    });
    $('confirm-run').addEventListener('click', () => $('confirm').close('run'));
    $('confirm-cancel').addEventListener('click', () => $('confirm').close('cancel'));
    setInterval(refreshAges, 5000);
    setInterval(refreshReviews, 5000); // held calls of other agents (a reviewer's queue) have no event of hers
  }

  async function start() {
    wire();
    const r = await fetch('/ui/api/session', { credentials: 'same-origin' });
    if (r.status === 401) {
      location.assign('/ui/signin');
      return;
    }
    const s = await r.json();
    csrf = s.csrf;
    $('agent').textContent = s.agent;
    $('task').value = s.task || '';
    setGuard(s.guard || null);
    updateCount();
    connect();
  }

  start();
})();
