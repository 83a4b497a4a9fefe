// The console's client script, served as /console/console.js (no build step, no inline script: the
// CSP allows only this origin's scripts). It keeps the API key in sessionStorage, fetches each view
// (/console/f/<route after the #>) with it as Authorization, places the HTML it gets, and sends the
// actions' forms to the API after a confirmation. Plain ES2020, written for the browser.
export const CLIENT_JS = String.raw`'use strict';
(function () {
  var KEY = 'lhbox.console.key';
  var ROUTE = /^\/(sinks\/[A-Za-z0-9_-]+(\/rejects)?|tables\/[^\/?#]+|usage)?(\?[^#]*)?$/;
  var $ = function (id) { return document.getElementById(id); };
  var key = function () { return sessionStorage.getItem(KEY); };

  function call(method, path, body) {
    var headers = { authorization: 'Bearer ' + key() };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  }

  // The API's error envelope {error: {code, message}}, or the status when there is none.
  function problem(res) {
    return res.json().then(function (j) {
      return j && j.error ? j.error.message + ' (' + j.error.code + ')' : res.status + ' ' + res.statusText;
    }, function () { return res.status + ' ' + res.statusText; });
  }

  function say(id, text) {
    var el = $(id);
    el.textContent = text || '';
    el.hidden = !text;
  }

  function signIn(message) {
    sessionStorage.removeItem(KEY);
    $('nav').hidden = true;
    $('view').innerHTML = '';
    say('error', '');
    $('sign-in').hidden = false;
    say('sign-in-error', message);
    $('sign-in').elements.key.focus();
  }

  function route() {
    var r = location.hash.replace(/^#/, '') || '/';
    return ROUTE.test(r) ? r : null;
  }

  function show() {
    if (!key()) return signIn('');
    var r = route();
    if (r === null) { say('error', 'No such page: ' + location.hash); $('view').innerHTML = ''; return; }
    var path = r.split('?')[0] === '/' ? '/overview' + r.slice(1) : r;
    document.body.classList.add('loading');
    return call('GET', '/console/f' + path).then(function (res) {
      document.body.classList.remove('loading');
      if (res.status === 401) return problem(res).then(signIn);
      if (!res.ok) return problem(res).then(function (m) { $('view').innerHTML = ''; say('error', m); });
      if (!/^text\/html/.test(res.headers.get('content-type') || '')) { say('error', 'unexpected answer'); return; }
      $('sign-in').hidden = true;
      $('nav').hidden = false;
      $('who').textContent = res.headers.get('x-lhbox-principal') || '';
      say('error', '');
      return res.text().then(function (html) { $('view').innerHTML = html; });
    }, function (err) {
      document.body.classList.remove('loading');
      say('error', 'The console could not reach the API: ' + err.message);
    });
  }

  // An action's body: its inputs as numbers; an empty one is left out, or null where data-empty says so.
  function bodyOf(form) {
    var body = {};
    Array.prototype.forEach.call(form.querySelectorAll('input[name]'), function (input) {
      if (input.value !== '') body[input.name] = input.type === 'number' ? Number(input.value) : input.value;
      else if (input.dataset.empty === 'null') body[input.name] = null;
    });
    return Object.keys(body).length ? body : undefined;
  }

  // A new send key, shown once: the page is not fetched again (that would lose it) until the next view.
  function showKey(answer) {
    var box = $('new-key');
    box.textContent = '';
    var p = document.createElement('p');
    p.textContent = 'New send key of ' + answer.name + ' (shown once; only its hash is kept). The previous key works until ' + answer.previous_retires_at + '.';
    var code = document.createElement('code');
    code.textContent = answer.send_key;
    var copy = document.createElement('button');
    copy.type = 'button';
    copy.dataset.copy = answer.send_key;
    copy.textContent = 'Copy';
    box.append(p, code, copy);
    box.hidden = false;
    say('action-status', 'Rotated.');
  }

  function act(form) {
    if (!window.confirm(form.dataset.confirm)) return;
    say('action-status', 'working…');
    call(form.dataset.action, form.dataset.path, bodyOf(form)).then(function (res) {
      if (!res.ok) return problem(res).then(function (m) { say('action-status', 'Refused: ' + m); });
      if (form.dataset.showKey) return res.json().then(showKey);
      // A new hash shows its view on hashchange; the same one is shown again here.
      if (form.dataset.then && location.hash !== form.dataset.then) location.hash = form.dataset.then;
      else return show();
    }, function (err) { say('action-status', 'Not sent: ' + err.message); });
  }

  document.addEventListener('submit', function (e) {
    var form = e.target;
    e.preventDefault();
    if (form.id === 'sign-in') {
      sessionStorage.setItem(KEY, form.elements.key.value.trim());
      form.reset();
      return show();
    }
    if (form.dataset.action) return act(form);
    if (form.dataset.nav) {
      var q = new URLSearchParams();
      Array.prototype.forEach.call(form.querySelectorAll('[name]'), function (f) { if (f.value) q.set(f.name, f.value); });
      var s = q.toString();
      location.hash = form.dataset.nav + (s ? '?' + s : '');
    }
  });

  document.addEventListener('click', function (e) {
    // A link to the page already shown fetches it again (no hashchange): how a view is refreshed.
    var a = e.target.closest('a[href^="#"]');
    if (a && a.getAttribute('href') === (location.hash || '#/')) { e.preventDefault(); show(); return; }
    var t = e.target.closest('[data-copy], #sign-out');
    if (!t) return;
    if (t.id === 'sign-out') return signIn('Signed out.');
    navigator.clipboard.writeText(t.dataset.copy).then(function () { t.classList.add('copied'); t.textContent = 'Copied'; }, function () {
      t.textContent = 'Copy refused by the browser: select the text above';
    });
  });

  window.addEventListener('hashchange', show);
  show();
})();
`
