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

  // showValue renders a tool's output for people: a string as its text
  // (line breaks as line breaks), an object as its fields, each string
  // field as text and anything else as JSON.
  function showValue(v) {
    if (typeof v === 'string') return el('pre', { class: 'output' }, v);
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const dl = el('dl', { class: 'output' });
      for (const [k, x] of Object.entries(v)) {
        const multi = typeof x === 'string' ? x.includes('\n') : (x !== null && typeof x === 'object');
        const txt = typeof x === 'string' ? x : pretty(x);
        dl.append(el('dt', {}, k), el('dd', {}, multi ? el('pre', {}, txt) : el('span', { class: 'value' }, txt)));
      }
      return dl;
    }
    return el('pre', { class: 'output' }, pretty(v));
  }

  // Human words for the pipeline's outcomes (the raw id stays in a title).
  const LABELS = {
    ok: 'OK',
    intent_verification_required: 'Waiting for confirmation',
    intent_misaligned: 'Refused by a reviewer',
    tool_not_found: 'No such tool',
    tool_deprecated: 'Tool retired',
    channel_capability_denied: 'Not allowed here',
    tool_capability_denied: 'Not allowed',
    schema_validation_failed: 'Wrong arguments',
    payload_too_large: 'Too large',
    timeout: 'Timed out',
    would_timeout: 'Would time out',
    provider_unavailable: 'Tool unavailable',
    provider_crashed: 'Tool crashed',
    provider_rejected: 'Failed',
    rate_limited: 'Too many calls',
    cancelled: 'Cancelled',
    already_claimed: 'Already running',
    error: 'Failed',
  };
  function label(kind) {
    if (LABELS[kind]) return LABELS[kind];
    const t = String(kind || 'failed').replace(/_/g, ' ');
    return t.charAt(0).toUpperCase() + t.slice(1);
  }

  // Unreachable is what a request that never got an answer throws.
  const UNREACHABLE = 'the server cannot be reached (is airs serve running?)';

  async function api(method, url, body) {
    const opts = { method, credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf } };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    let r;
    try {
      r = await fetch(url, opts);
    } catch (e) {
      throw new Error(UNREACHABLE);
    }
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
    if (on) {
      c.focused = c.li.contains(document.activeElement);
      setProblem(c.li, '');
    }
    for (const b of c.li.querySelectorAll('button')) b.disabled = on;
    c.li.setAttribute('aria-busy', on ? 'true' : 'false');
  }

  // setProblem shows (or with '' clears) what went wrong inside box, where
  // the user acted, and says it in the live region too (unless quiet: the
  // same problem drawn again).
  function setProblem(box, msg, quiet) {
    let p = box.querySelector(':scope .problem');
    if (!msg) {
      if (p) p.remove();
      return;
    }
    if (!p) {
      p = el('p', { class: 'problem' });
      (box.querySelector(':scope > article') || box).append(p);
    }
    p.textContent = msg;
    if (!quiet) announce(msg);
  }

  // failed puts a card back in use with what went wrong shown in it.
  function failed(c, what, msg, focusSel) {
    busy(c, false);
    setProblem(c.li, what + ' failed: ' + msg + '. Try again.');
    if (c.focused) c.li.querySelector(focusSel).focus();
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
      failed(c, 'Accept', e.message, 'button.accept');
      return;
    }
    if (!r.ok && !r.data.result && (r.status === 429 || r.status === 503 || r.status === 0)) {
      // Turned away before anything ran (busy, or the server going down):
      // the suggestion is still there to accept.
      failed(c, 'Accept', r.data.message || ('HTTP ' + r.status), 'button.accept');
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
    let r;
    try {
      r = await api('POST', '/ui/api/recommendations/' + encodeURIComponent(id) + '/dismiss');
    } catch (e) {
      failed(c, 'Dismiss', e.message, 'button.dismiss');
      return;
    }
    if (r.ok || r.status === 404) {
      removeCard(id, 'Dismissed ' + c.rec.tool);
    } else {
      failed(c, 'Dismiss', r.data.message || ('HTTP ' + r.status), 'button.dismiss');
    }
  }

  function showResult(tool, r, focus) {
    const ok = r.ok && r.data.result && r.data.result.outcome === 'ok';
    let body;
    if (r.ok && r.data.result) {
      body = showValue(r.data.result.output);
    } else {
      body = el('p', { class: 'output' }, r.data.message || ('HTTP ' + r.status),
        r.data.hint ? el('br') : null, r.data.hint ? r.data.hint : null);
    }
    const what = ok ? 'ok' : (r.data.error || (r.data.result && r.data.result.outcome) || 'failed');
    const li = el('li', { class: ok ? 'ok' : 'error', tabindex: '-1', 'data-tool': tool, 'data-outcome': what },
      el('h3', { title: what }, tool + ': ' + label(what)),
      body);
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
    // A long tool name is cut short; its button shows the whole row.
    const more = el('button', { type: 'button', class: 'cell', title: ev.tool + ' (' + ev.provider + ')', 'aria-expanded': 'false' }, ev.tool);
    const tr = el('tr', { 'data-call': ev.call_id, 'data-kind': outcome },
      el('td', { class: 'tool' }, more),
      el('td', { class: 'agent' }, ev.caller),
      el('td', { class: 'outcome-' + ev.outcome, title: outcome }, label(outcome)),
      el('td', { class: 'num' }, latency(ev.latency_ns)),
      el('td', { class: 'when' }, el('time', { datetime: ev.at, 'data-ago': true }, ago(ev.at))));
    more.addEventListener('click', () => {
      const open = tr.classList.toggle('open');
      more.setAttribute('aria-expanded', open ? 'true' : 'false');
    });
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

  // focusAfter: where the focus goes when the review queue is drawn again
  // after a decision (the next review, else the heading); null: it stays.
  let focusAfter = null;

  function setGuard(g) {
    guard = g;
    const ul = $('reviews');
    const gl = $('grants');
    // The focus inside the queue stays on the same button when it is
    // still there (a redraw from the stream), else goes on.
    const a = document.activeElement;
    const inQueue = ul.contains(a) || gl.contains(a);
    const keep = inQueue && a.closest('li') ? [a.closest('li').dataset.id, a.className.split(' ')[0]] : null;
    const problems = new Map([...ul.querySelectorAll('li')].filter((li) => li.querySelector('.problem'))
      .map((li) => [li.dataset.id, li.querySelector('.problem').textContent]));
    ul.replaceChildren();
    gl.replaceChildren();
    const note = $('review-note');
    if (!g) {
      note.textContent = 'The guard is off: destructive calls run without a confirmation.';
      $('review-empty').hidden = true;
      $('review-count').textContent = '0';
      $('grants-box').hidden = true;
      return;
    }
    note.textContent = g.reviewer
      ? 'You review: a held call runs once you approve it and it is sent again.'
      : 'Your calls that wait for a person show here. A reviewer decides them, in this page or in the terminal.';
    const list = g.reviews || [];
    for (const rv of list) {
      const li = renderReview(rv, g.reviewer);
      ul.append(li);
      if (problems.has(rv.id)) setProblem(li, problems.get(rv.id), true);
    }
    $('review-count').textContent = String(list.length);
    $('review-empty').hidden = list.length > 0;
    $('grants-box').hidden = !g.reviewer;
    for (const gr of g.grants || []) gl.append(renderGrant(gr));
    $('grants-empty').hidden = (g.grants || []).length > 0;
    let target = null;
    if (focusAfter) {
      target = focusAfter();
      focusAfter = null;
    } else if (keep) {
      const li = document.querySelector('li[data-id="' + CSS.escape(keep[0]) + '"]');
      target = li && li.querySelector('button.' + CSS.escape(keep[1]));
      if (!target) target = $('review-h');
    }
    if (target) target.focus();
  }

  // afterDecision: where the focus goes once li is decided: the item after
  // it (else the one before), else heading; looked up when it is needed,
  // as the stream may have drawn the list again by then.
  function afterDecision(li, list, heading) {
    const sib = (li.nextElementSibling || li.previousElementSibling);
    const id = sib ? sib.dataset.id : '';
    return () => {
      const n = id && $(list).querySelector('li[data-id="' + CSS.escape(id) + '"] button');
      return n || $(heading);
    };
  }

  // settle moves the focus on after li's item was decided: at once when the
  // stream already drew the list without it, else once it is drawn again.
  async function settle(id, list, target) {
    if (!$(list).querySelector('li[data-id="' + CSS.escape(id) + '"]')) {
      target().focus();
      return;
    }
    focusAfter = target;
    if (!(await refreshReviews()) && focusAfter) {
      const li = $(list).querySelector('li[data-id="' + CSS.escape(id) + '"]');
      if (li) li.remove(); // decided; the stream redraws the list when it is back
      focusAfter = null;
      target().focus();
    }
  }

  function renderGrant(gr) {
    const id = gr.caller + '\u0000' + gr.tool;
    const b = el('button', { type: 'button', class: 'revoke quiet', 'aria-label': 'Revoke: ' + gr.caller + ' may call ' + gr.tool + ' without asking' }, 'Revoke');
    const li = el('li', { class: 'grant', 'data-id': id, 'data-caller': gr.caller, 'data-tool': gr.tool },
      el('article', {},
        el('p', {}, el('strong', {}, gr.caller), ' may call ', el('strong', {}, gr.tool), ' without asking'),
        el('p', { class: 'small' }, 'allowed by ' + String(gr.by || '').replace(/^http:/, '') + ', ',
          el('time', { datetime: gr.at, 'data-ago': true }, ago(gr.at))),
        el('div', { class: 'row actions' }, b)));
    b.addEventListener('click', () => revoke(gr, li, b));
    return li;
  }

  async function revoke(gr, li, b) {
    const target = afterDecision(li, 'grants', 'grants-h');
    b.disabled = true;
    setProblem(li, '');
    let r;
    try {
      r = await api('POST', '/ui/api/grants/revoke', { caller: gr.caller, tool: gr.tool });
    } catch (e) {
      r = { ok: false, data: { message: e.message } };
    }
    const cur = $('grants').querySelector('li[data-id="' + CSS.escape(li.dataset.id) + '"]') || li;
    if (!r.ok && r.status !== 404) {
      const cb = cur.querySelector('button');
      cb.disabled = false;
      setProblem(cur, 'Revoke failed: ' + (r.data.message || ('HTTP ' + r.status)) + '. Try again.');
      cb.focus();
      return;
    }
    announce('Revoked: ' + gr.caller + ' asks again before ' + gr.tool);
    const grants = r.ok && r.data.grants ? r.data.grants : (guard.grants || []).filter((x) => !(x.caller === gr.caller && x.tool === gr.tool));
    focusAfter = target;
    setGuard(Object.assign({}, guard, { grants }));
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
        btn('Always for this agent', 'always quiet', async () => {
          if (await askAlways(rv)) decide(rv, 'approve', true);
          else {
            const b = li.querySelector('button.always');
            if (b) b.focus();
          }
        });
        btn('Deny', 'deny danger', () => decide(rv, 'deny', false));
      } else {
        btn('Looks fine', 'approve', () => decide(rv, 'approve', false));
        btn('Flag', 'deny danger', () => decide(rv, 'deny', false));
      }
      li.querySelector('article').append(row);
    }
    return li;
  }

  // askAlways: a standing grant is a larger answer than one call's, so it
  // is asked again in words.
  function askAlways(rv) {
    const d = $('always');
    $('always-caller').textContent = rv.caller;
    $('always-tool').textContent = rv.tool;
    return new Promise((resolve) => {
      const onClose = () => {
        d.removeEventListener('close', onClose);
        resolve(d.returnValue === 'always');
      };
      d.returnValue = '';
      d.addEventListener('close', onClose);
      d.showModal();
      $('always-cancel').focus();
    });
  }

  async function decide(rv, action, always) {
    const li = $('reviews').querySelector('li[data-id="' + CSS.escape(rv.id) + '"]');
    if (!li) return;
    const target = afterDecision(li, 'reviews', 'review-h');
    const buttons = [...li.querySelectorAll('button')];
    const from = (buttons.find((b) => b === document.activeElement) || buttons[0]).className.split(' ')[0];
    for (const b of buttons) b.disabled = true;
    setProblem(li, '');
    let r;
    try {
      r = await api('POST', '/ui/api/reviews/' + encodeURIComponent(rv.id) + '/' + action, always ? { always: true } : undefined);
    } catch (e) {
      r = { ok: false, status: 0, data: { message: e.message } };
    }
    if (!r.ok && r.status !== 409 && r.status !== 404 && r.status !== 410) {
      // Not decided: the review stays, usable, with why (the stream may
      // have drawn it again meanwhile).
      const cur = $('reviews').querySelector('li[data-id="' + CSS.escape(rv.id) + '"]') || li;
      for (const b of cur.querySelectorAll('button')) b.disabled = false;
      setProblem(cur, 'Not decided: ' + (r.data.message || ('HTTP ' + r.status)) + '. Try again.');
      (cur.querySelector('button.' + CSS.escape(from)) || cur.querySelector('button')).focus();
      return;
    }
    const done = r.ok ? (r.data.review ? r.data.review.status : action) : (r.data.message || ('HTTP ' + r.status));
    announce(rv.tool + ' for ' + rv.caller + ': ' + done);
    await settle(rv.id, 'reviews', target);
  }

  // refreshReviews draws the queue from the server now (the stream does
  // it too, a moment later); false when it could not.
  async function refreshReviews() {
    if (!guard) return false;
    try {
      const r = await api('GET', '/ui/api/reviews');
      if (!r.ok) return false;
      setGuard({ reviewer: r.data.reviewer, reviews: r.data.reviews, grants: guard.grants });
      return true;
    } catch (e) {
      return false; // the stream's reconnect handles a lost session
    }
  }

  // ---- the event stream ----

  function setConn(state, text) {
    const c = $('conn');
    c.className = 'conn ' + state;
    c.textContent = text;
    $('offline').hidden = state !== 'down';
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
    taskFromServer(d.task || '', d.task_version);
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
    on('call', addCall);
    on('breakers', (d) => setBreakers(d.breakers));
    on('guard', (g) => setGuard(g || null));
    on('task', (d) => taskFromServer(d.task || '', d.version));
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

  // The task box: taskBase is the version of the task the text was edited
  // from; a save sends it, and a task changed since (elsewhere) is a
  // conflict shown to the user, not overwritten.
  let taskBase = '';
  let taskShown = ''; // the server's text as last put in the box
  let saving = false;

  function taskStatus(msg, isError) {
    const st = $('task-status');
    st.textContent = msg;
    st.classList.toggle('error', !!isError);
  }

  function taskEdited() { return $('task').value.trim() !== taskShown.trim(); }

  // taskFromServer takes the task as the server has it now.
  function taskFromServer(text, version) {
    if (saving) return;
    if (version === taskBase && text === taskShown) return;
    if (!taskEdited()) {
      $('task').value = text;
      taskShown = text;
      taskBase = version || '';
      $('task-conflict').hidden = true;
      if (document.readyState === 'complete' && snapshots > 0) taskStatus(text ? 'Task changed elsewhere: now shown.' : 'Task cleared elsewhere.');
      return;
    }
    // The user is typing: their text stays; a save will ask.
    taskStatus('The task was changed elsewhere while you edit it: saving will ask which to keep.');
  }

  function setTaskButtons(on) {
    for (const b of $('task-form').querySelectorAll('button')) b.disabled = !on;
  }

  async function setTask(text, base) {
    saving = true;
    setTaskButtons(false);
    taskStatus('Saving…');
    $('task-conflict').hidden = true;
    let r;
    try {
      r = await api('PUT', '/ui/api/task', { task: text, base_version: base });
    } catch (e) {
      r = { ok: false, status: 0, data: { message: e.message } };
    }
    saving = false;
    setTaskButtons(true);
    if (r.ok) {
      taskShown = r.data.task || '';
      taskBase = r.data.version || '';
      taskStatus(text ? 'Task set.' : 'Task cleared.');
      return;
    }
    if (r.status === 409 && r.data.error === 'task_conflict') {
      taskStatus('Not saved: the task was changed elsewhere.', true);
      $('task-theirs').textContent = r.data.task || '(no task)';
      $('task-conflict').dataset.version = r.data.version || '';
      $('task-conflict').dataset.task = r.data.task || '';
      $('task-conflict').hidden = false;
      $('task-keep-mine').focus();
      return;
    }
    taskStatus('Not saved: ' + (r.data.message || ('HTTP ' + r.status)) + '. Your text is kept: try again.', true);
  }

  function wire() {
    $('task-form').addEventListener('submit', (e) => {
      e.preventDefault();
      setTask($('task').value.trim(), taskBase);
    });
    $('task-clear').addEventListener('click', () => {
      $('task').value = '';
      setTask('', taskBase);
    });
    $('task-keep-mine').addEventListener('click', () => setTask($('task').value.trim(), $('task-conflict').dataset.version));
    $('task-use-theirs').addEventListener('click', () => {
      const c = $('task-conflict');
      $('task').value = c.dataset.task;
      taskShown = c.dataset.task;
      taskBase = c.dataset.version;
      c.hidden = true;
      taskStatus('Showing the newer task.');
      $('task').focus();
    });
    $('always-ok').addEventListener('click', () => $('always').close('always'));
    $('always-cancel').addEventListener('click', () => $('always').close('cancel'));
    $('signout').addEventListener('click', async () => {
      try { await api('POST', '/ui/api/signout'); } finally { location.assign('/ui/signin'); }
    });
    $('confirm-run').addEventListener('click', () => $('confirm').close('run'));
    $('confirm-cancel').addEventListener('click', () => $('confirm').close('cancel'));
    setInterval(refreshAges, 5000);
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
    taskShown = s.task || '';
    taskBase = s.task_version || '';
    setGuard(s.guard || null);
    updateCount();
    connect();
  }

  start();
})();
