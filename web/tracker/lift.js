/*! Lift storefront tracker. Plain JS, no dependencies. Load it with
 *  <script src="https://LIFT/lift.js" data-shop="SHOP.myshopify.com" async></script>
 * It assigns this visitor to the shop's active tests (same visitor, same group),
 * records each assignment once, applies what a browser can apply, tracks page
 * views and writes the cart attributes order attribution reads. */
(function (w, d) {
  'use strict';
  if (w.lift && w.lift.visitor) return; // loaded twice: keep the first
  var script = d.currentScript || d.querySelector('script[src*="lift.js"]') || {};
  var attr = function (n) { return script.getAttribute ? script.getAttribute(n) : null; };
  var src = script.src || '';
  var base = attr('data-endpoint') || src.replace(/\/lift\.js([?#].*)?$/, '');
  var shop = attr('data-shop') || qs('shop', src) || (w.Shopify && w.Shopify.shop) || location.hostname;
  var cartURL = attr('data-cart-update-url') || '/cart/update.js';
  var DAY = 864e5;
  var html = d.documentElement;
  // Changes apply only until the deadline (ms from navigation start): the
  // anti-flicker snippet's (data-lift-timeout on <html>), else the script's
  // data-timeout, else 2 s. Later, the page stays as served: a visitor never
  // sees a price change under their eyes, and is not counted in any test on
  // this page (lift.assignments[id].late) nor on the routes a router shows
  // in it (route(), in nav.js): one not yet in a test is not entered, and
  // one already in it is left out of this page's events and cart
  // attributes, so nobody is counted in a group whose page they did not
  // see. A returning page is rarely late: it applies the cached config
  // (cached()) without waiting on the network.
  var deadline = +html.getAttribute('data-lift-timeout') || +attr('data-timeout') || 2000;
  function late() { return !!(w.performance && performance.now) && performance.now() > deadline; }
  // reveal ends the snippet's hiding of [data-lift-price] and test content,
  // and of the whole page where this visitor may be sent elsewhere.
  // One class per call: older browsers remove only the first argument.
  function reveal() { if (html.classList) { html.classList.remove('lift-hide'); html.classList.remove('lift-hide-page'); } }

  function qs(name, url) {
    var m = new RegExp('[?&]' + name + '=([^&#]*)').exec(url || location.search);
    return m ? decodeURIComponent(m[1].replace(/\+/g, ' ')) : '';
  }
  function store(kind) {
    try { var s = w[kind]; s.setItem('_lift_t', '1'); s.removeItem('_lift_t'); return s; } catch (e) { return null; }
  }
  var ls = store('localStorage'), ss = store('sessionStorage');
  function get(s, k) { try { return s ? s.getItem(k) : null; } catch (e) { return null; } }
  function set(s, k, v) { try { if (s) s.setItem(k, v); } catch (e) { /* full or blocked */ } }
  function getJSON(s, k) { try { return JSON.parse(get(s, k)) || {}; } catch (e) { return {}; } }
  function cookie(k) {
    var m = new RegExp('(?:^|; )' + k + '=([^;]*)').exec(d.cookie);
    return m ? decodeURIComponent(m[1]) : '';
  }
  function setCookie(k, v, ms) {
    d.cookie = k + '=' + encodeURIComponent(v) + '; path=/; max-age=' + Math.floor(ms / 1000) + '; SameSite=Lax' +
      (location.protocol === 'https:' ? '; Secure' : '');
  }
  function uuid() {
    if (w.crypto && crypto.randomUUID) return crypto.randomUUID();
    return 'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'.replace(/[xy]/g, function (c) {
      var r = Math.random() * 16 | 0;
      return (c === 'x' ? r : (r & 3 | 8)).toString(16);
    });
  }

  // FNV-1a, 32 bits: the same visitor and test always land in the same
  // bucket. Scheme 2 (every test created since migration 0160) finishes it
  // with murmur3's fmix32: FNV-1a alone mixes its last bytes poorly, so two
  // tests running together split visitors in step. A test keeps the scheme
  // it started with (t.bucketing), or its running visitors would move.
  function hash(s, scheme) {
    var h = 0x811c9dc5;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
    if (scheme === 2) {
      h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16;
    }
    return h >>> 0;
  }
  // bucket is where visitor v falls in test t: traffic 0-99, split 0-9999.
  function bucket(v, t) {
    return { traffic: hash(v + ':' + t.id + ':traffic', t.bucketing) % 100, split: hash(v + ':' + t.id, t.bucketing) % 10000 };
  }
  function digits(id) { var m = /(\d+)\s*$/.exec(String(id || '')); return m ? m[1] : String(id || ''); }

  // Consent: a visitor who said no to analytics (the platform's customer
  // privacy API, when the page has loaded it, or the browser's Global
  // Privacy Control) gets the store as it is: no identifier is stored,
  // nothing is sent, no test is applied. lift keeps its shape, so the
  // shop's own calls (lift.track, lift.cartAttributes) do nothing. A
  // visitor whose consent comes later is tracked from the next page.
  var privacy = w.Shopify && w.Shopify.customerPrivacy;
  var declined = (!!privacy && typeof privacy.analyticsProcessingAllowed === 'function' && privacy.analyticsProcessingAllowed() === false) ||
    w.navigator.globalPrivacyControl === true;
  if (declined) {
    reveal();
    html.setAttribute('data-lift-ready', 'declined');
    var none = function () { return null; };
    w.lift = { visitor: '', session: '', shop: shop, assignments: {}, declined: true, experimentIds: function () { return []; },
      price: none, track: none, cartAttributes: function () { return {}; }, lineProperties: function () { return {}; },
      syncCart: function () { return Promise.resolve(); },
      bucket: none, page: function () { return w.lift.ready; } };
    w.lift.ready = Promise.resolve(w.lift);
    return;
  }

  // Visitor: a first-party cookie, mirrored in localStorage so either survives
  // the other being cleared.
  var visitor = cookie('_lift_vid') || get(ls, '_lift_vid');
  // Returning: the visitor was known before this session began (kept for
  // the session, so its second page is still a new visitor's).
  var returning = (cookie('_lift_vt') || (visitor ? 'returning' : 'new')) === 'returning';
  if (!visitor) visitor = uuid();
  setCookie('_lift_vid', visitor, 365 * DAY);
  set(ls, '_lift_vid', visitor);
  setCookie('_lift_vt', returning ? 'returning' : 'new', 30 * 60 * 1000);

  // Bot markers are matched as the server's ingest/meta.go matches them:
  // anywhere in the agent, except inside a real phone's name (CUBOT phones
  // say "CUBOT" in every agent; marked as bots, their buyers left results).
  var ua = navigator.userAgent || '', uaBots = ua.replace(/cubot/gi, '');
  var device = /bot|crawl|spider|slurp|headless|lighthouse|preview/i.test(uaBots) ? 'bot'
    : /iPad|Tablet|PlayBook|Silk|Android(?!.*Mobi)/i.test(ua) ? 'tablet'
    : /Mobi|iPhone|iPod|Android|Windows Phone/i.test(ua) ? 'mobile' : 'desktop';

  // page is what the page marks of itself, read again on a route change.
  function readPage() {
    var el = d.querySelector('[data-lift-page-type]') || d.body || d.documentElement;
    var g = function (n) { return (el.getAttribute && el.getAttribute(n)) || ''; };
    var split = function (s) { return s ? s.split(',') : []; };
    return { type: g('data-lift-page-type') || 'page', product: digits(g('data-lift-product-id')),
      variants: split(g('data-lift-variant-ids')) };
  }
  var page = readPage();
  // here is the path this page counts views at (hereURL its address) and
  // ref where it came from: the document's, until a client-side route
  // change (route(), in nav.js).
  var here = location.pathname, hereURL = location.href, ref = d.referrer;

  function send(path, body) {
    var url = base + path + '?shop=' + encodeURIComponent(shop), data = JSON.stringify(body);
    // text/plain needs no CORS preflight and is what sendBeacon sends.
    if (navigator.sendBeacon && navigator.sendBeacon(url, new Blob([data], { type: 'text/plain' }))) return;
    if (w.fetch) fetch(url, { method: 'POST', body: data, keepalive: true, headers: { 'Content-Type': 'text/plain' } });
  }
  function ping(path, params) {
    var q = ['shop=' + encodeURIComponent(shop)];
    for (var k in params) if (params[k] !== undefined && params[k] !== '') q.push(k + '=' + encodeURIComponent(params[k]));
    var url = base + path + '?' + q.join('&');
    if (w.fetch) fetch(url, { keepalive: true }).catch(function () {});
    else new Image().src = url;
  }
  // patience is how long (ms) the tracker waits on a request of its own: a
  // hung connection must not keep lift.ready pending for minutes.
  var patience = 10000;
  function getJSONFrom(path, cache) {
    var opts = { cache: cache || 'default' };
    if (w.AbortSignal && AbortSignal.timeout) opts.signal = AbortSignal.timeout(patience);
    return fetch(base + path, opts).then(function (r) {
      if (!r.ok) throw new Error('lift: ' + path + ' ' + r.status);
      return r.json();
    });
  }

  // Session: one per 30 idle minutes, shared by the visitor's tabs. The
  // cookie is written as soon as the id is known, and a tab whose answer
  // comes after another tab's keeps that tab's id, so a new visitor who
  // opens two pages at once has one session, not one per tab.
  function session() {
    var id = cookie('_lift_sid');
    if (id) return Promise.resolve(id);
    return getJSONFrom('/api/get-session', 'no-store').then(function (r) {
      set(ss, '_lift_landing', location.search);
      var sid = cookie('_lift_sid') || r.sessionId;
      setCookie('_lift_sid', sid, 30 * 60 * 1000);
      return sid;
    });
  }
  function country() {
    var c = cookie('_lift_cc');
    if (c) return Promise.resolve(c === '-' ? '' : c);
    return getJSONFrom('/api/public/get-country-code', 'no-store').then(function (r) {
      setCookie('_lift_cc', r.countryCode || '-', DAY);
      return r.countryCode || '';
    }, function () { return ''; });
  }

  // QA view: ?lift_force=42:1,57:-1 shows this tab group 1 of 42 and the
  // store without 57 (-1) for the tab's session (sessionStorage), and is
  // never recorded or counted: anyone may open such a link (a newsletter,
  // an ad), and self-selected visitors in a group would bias its results.
  // Earlier versions kept it in localStorage for good: that goes.
  var forced = getJSON(ss, '_lift_force');
  qs('lift_force').split(',').forEach(function (p) {
    var m = /^(\d+):(-?\d+)$/.exec(p.trim());
    if (m) forced[m[1]] = +m[2];
  });
  set(ss, '_lift_force', JSON.stringify(forced));
  try { if (ls) ls.removeItem('_lift_force'); } catch (e) { /* blocked */ }
  // A signed preview link (?lift_preview=<id>.<group>.<exp>.<mac>) shows a
  // group without entering the test: nothing is recorded.
  var preview = qs('lift_preview') || get(ss, '_lift_preview') || '';
  if (preview) set(ss, '_lift_preview', preview);
  var pm = /^(\d+)\.(\d+)\.(\d+)\./.exec(preview);
  if (pm && +pm[3] * 1000 < Date.now()) pm = null;

  function inAudience(a, ctx) {
    if (!a) return true;
    var has = function (list, v) { return !list || !list.length || list.indexOf(v) >= 0; };
    return has(a.countries, ctx.country) && has(a.devices, device) &&
      (!a.visitor_type || a.visitor_type === (returning ? 'returning' : 'new'));
  }

  // assign decides this visitor's group in t: -1 is "not in the test".
  function assign(t, ctx) {
    if (pm && pm[1] === t.id) return { group: +pm[2], reason: 'preview', preview: true };
    if (forced[t.id] !== undefined) {
      return { group: forced[t.id], reason: forced[t.id] < 0 ? 'force_assign_excluded' : 'force_assign_group', forced: true };
    }
    if (!inAudience(t.audience, ctx)) return { group: -1, reason: 'audience_targeting_excluded' };
    var at = bucket(visitor, t);
    if (at.traffic >= t.traffic_allocation) {
      return { group: -1, reason: 'traffic_allocation_excluded' };
    }
    var b = at.split, sum = 0, gs = t.groups || [];
    for (var i = 0; i < gs.length; i++) {
      sum += gs[i].weight * 100;
      if (b < sum) return { group: gs[i].index, reason: 'random_split' };
    }
    return { group: gs.length ? gs[gs.length - 1].index : -1, reason: 'random_split' };
  }

  function changes(t, group, type) {
    for (var i = 0; i < t.groups.length; i++) {
      if (t.groups[i].index !== group) continue;
      var c = t.groups[i].changes;
      if (!c) return null;
      return t.type === 'combined' ? c[type] || null : (t.type === type ? c : null);
    }
    return null;
  }
  function pathMatches(rule, path) {
    return rule.match_type === 'prefix' ? path.indexOf(rule.path || rule.source_path) === 0
      : path === (rule.path || rule.source_path);
  }

  // include nav.js: moving the visitor to other pages (tracker.go puts it here)

  // include content.js: what the visitor's groups change on the page (tracker.go puts it here)

  // counted: the visitor is in the test's group for results and orders
  // (not for a preview or a QA view, lift_force, nor on a page that did not
  // show the group: late).
  function counted(a) { return a.group >= 0 && !a.preview && !a.forced && !a.late; }

  var lift = w.lift = {
    visitor: visitor, session: '', shop: shop, assignments: {}, device: device,
    experimentIds: function () {
      var out = [];
      for (var k in lift.assignments) if (counted(lift.assignments[k])) out.push(k);
      return out;
    },
    // price is the price group changes show for a variant (null: the catalog's).
    price: function (variantId) { var p = prices[digits(variantId)]; return p ? p.v.price : null; },
    // track sends a standard event (product_added_to_cart, …) or a custom one.
    // Before the session and the visitor's tests are known (lift.ready) the
    // call waits in a queue, sent when they are (dropped if they never are).
    track: function (name, payload) {
      if (!lift.session) { if (queue) queue.push([name, payload, Date.now()]); return; }
      event(name, payload, Date.now());
    },
    // cartAttributes are what the order webhook reads to attribute the order.
    cartAttributes: function () {
      var a = [];
      for (var k in lift.assignments) if (counted(lift.assignments[k])) a.push(k + ':' + lift.assignments[k].group);
      return { _lift_visitor_id: visitor, _lift_session_id: lift.session, _lift_assignments: a.join(',') };
    },
    // lineProperties are the properties a line added to the cart carries
    // (see lineForms): merge them into each item's properties of a
    // /cart/add.js call.
    lineProperties: function () {
      var on = current && (current.cfg.tests || []).some(function (t) {
        var a = t.line_assignments && lift.assignments[t.id];
        return a && counted(a);
      });
      return on ? { _lift_assignments: lift.cartAttributes()._lift_assignments } : {};
    },
    // syncCart writes the cart attributes now (call it after adding to a new cart).
    syncCart: function () { return writeCart(true); },
    // page reports a client-side route change, once the route is rendered
    // (route(), in nav.js); history.pushState and the back button report
    // theirs themselves, unless the script tag says data-routes="manual".
    page: function () { return lift.ready.then(route).then(function () { return lift; }); },
    // bucket tells where a visitor id falls in a test ({id, bucketing}):
    // traffic 0-99 against traffic_allocation, split 0-9999 against the
    // groups' weights. For support ("which group does this visitor get?").
    bucket: function (visitorId, t) { return bucket(String(visitorId), { id: String(t.id), bucketing: t.bucketing }); }
  };

  // queue holds the track calls made before lift.ready; null once it failed.
  var queue = [];
  function event(name, payload, at) {
    var ids = lift.experimentIds(), custom = !/^[a-z][a-z0-9_]*$/.test(name) || !/^(page|product|collection|search|cart|checkout)_/.test(name);
    if (custom && !ids.length) return; // custom events count only inside a test
    send('/api/track/event', { eventId: uuid(), sessionId: lift.session, visitorId: visitor, source: 'script',
      eventType: custom ? 'lift:custom_event:' + name : name, createdAt: at, experimentIds: ids,
      pagePath: here.slice(0, 2000), payload: payload || {} });
  }
  function flush() {
    var q = queue || [];
    queue = [];
    q.forEach(function (c) { event(c[0], c[1], c[2]); });
  }

  // writeCart sets the attributes on the platform cart when they changed, and
  // always on cart and checkout pages (the cart may be new since).
  function writeCart(force) {
    var attrs = lift.cartAttributes(), key = JSON.stringify(attrs);
    if (!force && get(ss, '_lift_cart') === key || !w.fetch) return Promise.resolve();
    return fetch(cartURL, { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ attributes: attrs }) }).then(function (r) { if (r.ok) set(ss, '_lift_cart', key); }, function () {});
  }

  // A shipping test's rates are quoted at checkout by Lift's carrier
  // service, and the platform's rate request carries the cart's lines (with
  // their properties), not the cart's attributes. So while the visitor is
  // counted in such a test (line_assignments), each line it adds carries its
  // assignments as the property _lift_assignments (hidden from shoppers:
  // underscore): lift.lineProperties() for themes that add by JSON, and a
  // hidden input in each add-to-cart form, written once the groups are
  // applied and again as any form submits (capture phase, before the
  // theme's own handler reads the form), so forms drawn later (a drawer, a
  // quick add) carry it too. One lift.js added is removed once the visitor
  // is in no such test. A failure here must never break the form.
  function lineForms(f) {
    try {
      var v = lift.lineProperties()._lift_assignments, name = 'properties[_lift_assignments]';
      Array.prototype.forEach.call(f ? [f] : d.querySelectorAll('form[action*="/cart/add"]'), function (f) {
        if ((f.getAttribute('action') || '').indexOf('/cart/add') < 0) return;
        var i = f.querySelector('input[name="' + name + '"]');
        if (!v) { if (i && i.hasAttribute('data-lift')) i.parentNode.removeChild(i); return; }
        if (!i) {
          i = d.createElement('input');
          i.type = 'hidden'; i.name = name; i.setAttribute('data-lift', '');
          f.appendChild(i);
        }
        if (i.value !== v) i.value = v;
      });
    } catch (e) { /* the theme's form goes on as it is */ }
  }
  if (d.addEventListener) d.addEventListener('submit', function (e) { lineForms(e.target); }, true);

  // record sends an assignment once per visitor, test and assignment version.
  function record(t, a, ctx) {
    var done = getJSON(ls, '_lift_rec');
    if (a.preview || a.forced || a.late || done[t.id] === t.assignment_version) return;
    var landing = get(ss, '_lift_landing') || location.search;
    send('/api/track/assignment', { sessionId: lift.session, visitorId: visitor, experimentId: t.id, testGroup: a.group,
      createdAt: Date.now(), assignmentReason: a.reason, country: ctx.country || undefined, device: device,
      visitorType: returning ? 'returning' : 'new', utmSource: qs('utm_source', landing) || undefined,
      utmMedium: qs('utm_medium', landing) || undefined, utmCampaign: qs('utm_campaign', landing) || undefined,
      gclid: qs('gclid', landing) || undefined, fbclid: qs('fbclid', landing) || undefined });
    done[t.id] = t.assignment_version;
    set(ls, '_lift_rec', JSON.stringify(done));
  }

  // inScope: a product page counts for a test scoped to products (a price
  // test's, a visual edit's that names them: what its product analytics
  // read) only when it is one of them; a test naming none counts them all.
  function inScope(t) {
    var s = t.scope || {}, ids = [].concat(s.price && s.price.product_ids || [], s.visual_editor && s.visual_editor.product_ids || []);
    return !ids.length || ids.some(function (id) { return digits(id) === page.product; });
  }

  // apply assigns the visitor to each test of plan p's config and shows
  // its group's changes, unless the deadline has passed; p.go is the page to
  // move to, or '', and p.shown what it showed (test id: group and test).
  // shown is what the cached config showed on this page before: a test
  // shown alike stays as it is, and any other is late, the page being in
  // the visitor's sight already; one shown otherwise is left as shown.
  function apply(p, shown) {
    var go = '', isLate = !!shown || late(), away = [], css = [], hidden = [];
    lift.assignments = {};
    p.shown = {};
    (p.cfg.tests || []).forEach(function (t) {
      var a = assign(t, p.ctx), key = a.group + ' ' + JSON.stringify(t), was = shown && shown[t.id];
      if (isLate && was !== key && !a.preview) a.late = true; else p.shown[t.id] = key;
      lift.assignments[t.id] = a;
      if (a.group >= 0 && !a.preview) leaves(t, a.group, away);
      var ve = a.group >= 0 && !a.late && changes(t, a.group, 'visual_editor');
      if (ve && ve.custom_css) css.push(ve.custom_css);
      hides(ve, hidden);
      if (was) return;
      if (a.group < 0 || a.late) return blocks(t, 0);
      go = go || navigate(t, a.group);
      carryView(t, a.group);
      show(t, a.group);
    });
    paint();
    // The pages this visitor's redirects leave, for the anti-flicker
    // snippet: on the next page it hides the whole page there until this
    // script has sent the visitor on (or the deadline), so the page the
    // visitor is redirected from never shows.
    set(ls, '_lift_nav', JSON.stringify(away));
    // The CSS of this visitor's visual edits, for the snippet: on
    // the next pages it adds it to <head> before the body is parsed (B2-7:
    // the control's styles showed until this script ran), with a rule
    // hiding the elements of each DOM change while the snippet hides
    // (hides, in content.js), after the groups' CSS. Once this script has
    // added the groups' own style elements and made the DOM changes, the
    // early copy goes; a page past its deadline keeps what the visitor has
    // seen (its hiding rules end with the snippet's class).
    if (!pm) set(ls, '_lift_css', JSON.stringify({ at: Date.now(), css: css.concat(hidden).join('\n') }));
    var early = d.getElementById('lift-css-early');
    if (early && !isLate) early.parentNode.removeChild(early);
    if (!go) runScripts(); // on a page the visitor leaves, none
    p.go = go;
  }

  // The last config answer is kept (localStorage _lift_cfg, with the
  // country it was applied with), so a returning page shows the visitor's
  // groups as soon as it is parsed, on time, without waiting on the network:
  // a known visitor is not late for want of a slow answer. The groups follow
  // from the config and the visitor id, so the config is all there is to
  // keep. Each page's answer replaces it and decides what that page counts
  // (apply's shown): a test ended or changed since shows on one page, not
  // counted. It is used for 30 minutes, a session's idle time: past that, a
  // visitor back after a while (or a config endpoint that keeps failing)
  // waits for the network as on a first page rather than meet tests, or
  // redirects, that may have ended long ago. A preview tab neither reads
  // nor writes it: its config holds the previewed test alone.
  function cached() {
    var c = getJSON(ls, '_lift_cfg'), age = Date.now() - c.at;
    return !pm && c.cfg && c.shop === shop && age >= 0 && age < 30 * 60 * 1000 ? c : null;
  }
  function keep(cfg, cc) { if (!pm) set(ls, '_lift_cfg', JSON.stringify({ at: Date.now(), shop: shop, cc: cc, cfg: cfg })); }

  // The calls of session document 6.1: get-session, then observe/session,
  // observe on product pages and track/event. The config and the country
  // are read alongside the session, so changes show after one round trip.
  var sid = session();
  sid['catch'](function () { /* reported through lift.ready */ });
  // A preview link asks for its test alone (the server checks its
  // signature): the previewer sees that group, in no running test.
  var configURL = '/api/storefront/config?shop=' + encodeURIComponent(shop) + (pm ? '&preview=' + encodeURIComponent(preview) : '');
  var loaded = Promise.all([getJSONFrom(configURL, pm ? 'no-store' : ''), country()]);
  loaded['catch'](function () { /* reported through lift.ready, or moot on a page left */ });
  var current = null; // the plan this page applied last: {cfg, ctx, go, shown}
  // run applies a config once the document is parsed: the page's marks
  // (readPage) and the elements show() changes are all there only then. A
  // tracker that runs before the body (a cached async script, or a tag
  // without async) read no product there and recorded a product page's
  // view as a page view, and a config that came first changed no price on
  // a page that still counted the visitor in its group.
  // A page that stays is then watched as a route is (watch, in nav.js): a
  // storefront that renders or hydrates its prices after this paint (a
  // headless one) shows the group's price on them too.
  function whenParsed(v) { return new Promise(function (ok) { parsed(function () { ok(v); }); }); }
  function run(cfg, cc, shown) {
    page = readPage();
    current = { cfg: cfg, ctx: { country: cc } };
    apply(current, shown);
    if (!current.go) { reveal(); watch(); lineForms(); }
    return current;
  }
  var c = cached();
  var early = c ? whenParsed(c).then(function (c) { return run(c.cfg, c.cc); }) : Promise.resolve(null);
  lift.ready = early.then(function (e) {
    if (e && e.go) return e; // the cached groups send the visitor on at once
    return loaded.then(whenParsed).then(function (r) {
      if (r[0] && r[0].preview) r[0].tests = [r[0].preview.test]; else keep(r[0], r[1]);
      return run(r[0], r[1], e && e.shown);
    }, function (err) {
      reveal();
      throw err;
    });
  }).then(function (plan) {
    return sid.then(function (id) { lift.session = id; return plan; });
  }).then(function (plan) {
    setCookie('_lift_sid', lift.session, 30 * 60 * 1000);
    (plan.cfg.tests || []).forEach(function (t) { record(t, lift.assignments[t.id], plan.ctx); });
    if (plan.go) return leave(plan.go);
    sendView();
    flush();
    return writeCart(page.type === 'cart' || page.type === 'checkout');
  }).then(function () {
    html.setAttribute('data-lift-ready', '1');
    try { w.dispatchEvent(new CustomEvent('lift:ready', { detail: lift })); } catch (e) { /* old browser */ }
    return lift;
  }, function (err) {
    reveal();
    html.setAttribute('data-lift-ready', 'error');
    var dropped = queue ? queue.length : 0;
    queue = null; // later calls have no session to go with either
    if (w.console) console.warn('lift:', err, dropped ? '(' + dropped + ' tracked events dropped)' : '');
    return lift;
  });

  // sendView sends what a page view sends: observe/session for each test the
  // visitor is counted in, observe for those of a product page's product,
  // and page_viewed or product_viewed.
  function sendView() {
    var ids = lift.experimentIds(), now = Date.now();
    ids.forEach(function (id) {
      ping('/api/observe/session', { sessionId: lift.session, experimentId: id, visitorId: visitor,
        pagePath: here, referrer: ref, device: device, country: current.ctx.country,
        visitorType: returning ? 'returning' : 'new' });
    });
    if (!page.product) return event('page_viewed', { pageType: page.type }, now);
    (current.cfg.tests || []).forEach(function (t) {
      if (ids.indexOf(t.id) >= 0 && inScope(t)) {
        ping('/api/observe', { productId: page.product, experimentId: t.id, sessionId: lift.session, visitorId: visitor });
      }
    });
    event('product_viewed', { productIds: [page.product], variantIds: page.variants, pageType: page.type }, now);
  }

})(window, document);
