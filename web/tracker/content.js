// content.js shows what the visitor's groups change on the page (prices,
// images, content blocks, visual edits and their DOM changes): part of
// lift.js's closure, put at its include line by tracker.go.

  // prices are the group prices shown, by variant id: v the config's
  // entry, t its test.
  var prices = Object.create(null);
  function money(m) {
    var n = Number(m.amount);
    try { return new Intl.NumberFormat(d.documentElement.lang || undefined, { style: 'currency', currency: m.currency }).format(n); }
    catch (e) { return m.amount + ' ' + m.currency; }
  }
  function each(sel, fn, root) { Array.prototype.forEach.call((root || d).querySelectorAll(sel), fn); }
  // images are the group images shown, by product id ({urls, t}).
  var images = Object.create(null);
  // show applies price, content and style changes through data attributes:
  //   data-lift-price + data-lift-variant-id: the variant's price text
  //   data-lift-compare-at-price + data-lift-variant-id: its compare-at price
  //   data-lift-product-image="<product id>" on an img: the product's image
  //   data-lift-test="42" data-lift-group="1": shown only to group 1 of 42
  // and the visual editor's custom_css, images and dom_changes (by
  // selector: paintDOM).
  // Prices, images and DOM changes are painted once every test is shown
  // (paint).
  // showing is what this document shows of each test ({t, group}), in
  // order: its routes show the same (showRoute, in nav.js).
  var showing = [];
  function show(t, group) {
    html.setAttribute('data-lift-' + t.id, group);
    showing.push({ t: t, group: group });
    var p = changes(t, group, 'price');
    (p && p.prices || []).forEach(function (v) { prices[digits(v.product_variant_id)] = { v: v, t: t.id }; });
    blocks(t, group);
    var ve = changes(t, group, 'visual_editor');
    if (ve && ve.custom_css) {
      var st = d.createElement('style'); st.textContent = ve.custom_css; d.head.appendChild(st);
    }
    productImages(ve).forEach(function (m) { images[digits(m.product_id)] = { urls: m.urls, t: t.id }; });
    (ve && ve.dom_changes || []).forEach(function (c, i) { if (c && c.selector && c.attribute) doms.push({ c: c, t: t.id, i: i }); });
    queueScript(t, group);
  }
  function productImages(ve) {
    return (ve && ve.images || []).filter(function (m) { return m && m.urls && m.urls.length; });
  }
  // paint writes the DOM changes shown on the elements their selectors
  // match, then the prices and images shown on the marked elements (those
  // a change wrote too).
  function paint() {
    var touched = paintDOM();
    paintPrices(); paintImages();
    touched.forEach(function (el) { var s = el._liftDOM; for (var a in s.skip) s.end[a] = now(el, a); });
  }
  // paintPrices writes the prices shown on the elements marked for their
  // variants; an element a router reuses for a variant without one loses
  // the applied mark.
  function paintPrices() {
    each('[data-lift-price][data-lift-variant-id]', function (el) {
      var p = prices[el.getAttribute('data-lift-variant-id')];
      if (p) { text(el, money(p.v.price)); el.setAttribute('data-lift-applied', p.t); } else el.removeAttribute('data-lift-applied');
    });
    each('[data-lift-compare-at-price][data-lift-variant-id]', function (el) {
      var p = prices[el.getAttribute('data-lift-variant-id')];
      if (p && p.v.compare_at_price) text(el, money(p.v.compare_at_price));
    });
  }
  // paintImages: the k-th img marked for a product (document order; the
  // first is the hero) shows urls[k], without the srcset and sizes (its
  // own, its <picture>'s) the browser would pick from instead; the rest
  // stay. Only what differs is written, so the observer's writes end.
  function paintImages() {
    var seen = Object.create(null);
    each('img[data-lift-product-image]', function (el) {
      var id = digits(el.getAttribute('data-lift-product-image')), m = images[id], k = seen[id] = (seen[id] || 0) + 1;
      var u = m && m.urls[k - 1], p = el.parentNode;
      if (!u) return el.removeAttribute('data-lift-image-applied');
      if (el.getAttribute('src') !== u) el.setAttribute('src', u);
      ['srcset', 'sizes'].forEach(function (a) { if (el.hasAttribute(a)) el.removeAttribute(a); });
      if (p && p.nodeName === 'PICTURE') each('source[srcset]', function (s) { s.removeAttribute('srcset'); }, p);
      if (el.getAttribute('data-lift-image-applied') !== m.t) el.setAttribute('data-lift-image-applied', m.t);
    });
  }
  // text writes s as el's text where it differs: into its one text node if
  // it has one, which the framework that rendered it keeps writing to (a
  // new node would leave it writing to one no longer shown), else as its
  // content. A text already right is left alone, so the writes a route's
  // observer sees end there.
  function text(el, s) {
    if (el.textContent === s) return;
    var n = el.firstChild;
    if (n && n.nodeType === 3 && !n.nextSibling) n.data = s; else el.textContent = s;
  }

  // The visual editor's custom_js of the visitor's groups runs once the
  // groups are applied and the document is parsed, and again once on each
  // route view (showRoute), each in its own try/catch: a merchant's broken
  // code must break neither the page nor the tracker.
  var scripts = [];
  function queueScript(t, group) {
    var ve = changes(t, group, 'visual_editor');
    if (ve && ve.custom_js) scripts.push({ id: t.id, code: ve.custom_js });
  }
  function runScripts() {
    parsed(function () {
      scripts.splice(0).forEach(function (s) {
        try { new Function(s.code)(); } catch (e) { if (w.console) console.warn('lift: custom_js of test ' + s.id + ':', e); }
      });
    });
  }
  function parsed(fn) { if (d.readyState === 'loading') d.addEventListener('DOMContentLoaded', fn); else fn(); }


  // blocks shows a test's content blocks of one group only: a visitor
  // outside the test, or on a page past the deadline, sees the control's.
  function blocks(t, group) {
    each('[data-lift-test="' + t.id + '"][data-lift-group]', function (el) {
      el.hidden = +el.getAttribute('data-lift-group') !== group;
    });
  }

  // The visual editor's dom_changes (GrowthBook's domMutations, authored in
  // the admin panel; docs/dom-changes.md): each change, in list order, on
  // every element its selector matches, at each paint (the groups applied,
  // then the observer's window: elements the page adds or renders again
  // get them too). doms are those shown: {c: the change, t: its test id,
  // i: its index}. A change must not write twice what it wrote once: an
  // element and attribute (html: its content) left as the last paint left
  // them is skipped (el._liftDOM.end, written once paint is done, so html
  // the browser serializes unlike the value is not written at every
  // paint), and an append marks the element (data-lift-dom,
  // "<attribute>@<test>.<index>", which a clone keeps with what was
  // appended), so a content the page changes in place keeps one copy; a set
  // that writes drops the marks of its attribute, the appends after it
  // then applying to the new value. A change that fails (a bad selector,
  // an attribute name setAttribute refuses) is skipped alone, with one
  // warning a page.
  var doms = [], domRun = 0;
  function paintDOM() {
    var run = ++domRun, touched = [];
    doms.forEach(function (m) {
      var c = m.c, a = c.attribute, els;
      try { els = d.querySelectorAll(c.selector); } catch (e) { return warnDOM(m, e); }
      if (a === 'position') return move(m, els);
      Array.prototype.forEach.call(els, function (el) {
        var s = el._liftDOM || (el._liftDOM = { end: Object.create(null) });
        if (s.run !== run) { s.run = run; s.skip = Object.create(null); touched.push(el); }
        if (!(a in s.skip)) s.skip[a] = a in s.end && s.end[a] === now(el, a);
        if (!s.skip[a]) try { mutate(el, c, m.t + '.' + m.i); } catch (e) { warnDOM(m, e); }
      });
    });
    return touched;
  }
  // domAttributes are the attributes the shown DOM changes write (html
  // and moves change children, which the observer sees anyway), for it to
  // watch: a page that resets one within the window gets the change back.
  function domAttributes() {
    var out = [];
    doms.forEach(function (m) { var a = m.c.attribute; if (a !== 'html' && a !== 'position' && out.indexOf(a) < 0) out.push(a); });
    return out;
  }
  function now(el, a) { return a === 'html' ? el.innerHTML : el.getAttribute(a); }
  function warnDOM(m, e) {
    if (!m.warned && w.console) console.warn('lift: DOM change ' + m.i + ' of test ' + m.t + ' (' + m.c.selector + ') skipped:', e);
    m.warned = 1;
  }
  function mutate(el, c, k) {
    var a = c.attribute, act = c.action, v = c.value == null ? '' : String(c.value), html = a === 'html', was = now(el, a);
    if (a === 'class' && act !== 'set') {
      if (act === 'append' || act === 'remove') v.split(/\s+/).forEach(function (n) { if (n) el.classList[act === 'append' ? 'add' : 'remove'](n); });
    } else if (act === 'set') {
      if (was === v) return;
      if (html) el.innerHTML = v; else el.setAttribute(a, v);
      unmark(el, a);
    } else if (act === 'append') {
      if (mark(el, a + '@' + k)) { if (html) el.insertAdjacentHTML('beforeend', v); else el.setAttribute(a, (was || '') + v); }
    } else if (act === 'remove' && !html && was !== null) el.removeAttribute(a);
  }
  // mark adds token to el's marks, false if it has it already.
  function mark(el, token) {
    var m = el.getAttribute('data-lift-dom') || '';
    if ((' ' + m + ' ').indexOf(' ' + token + ' ') >= 0) return false;
    el.setAttribute('data-lift-dom', m ? m + ' ' + token : token);
    return true;
  }
  function unmark(el, a) {
    var m = el.getAttribute('data-lift-dom');
    if (m) el.setAttribute('data-lift-dom', m.split(' ').filter(function (x) { return x.indexOf(a + '@') !== 0; }).join(' '));
  }
  // move puts a position change's elements (els, in document order) into
  // the first match of its parent_selector, before the parent's first
  // match of insert_before_selector, else at its end: the last first, each
  // then before the one after it, so elements already in place stay.
  function move(m, els) {
    var c = m.c, p, b = null;
    try {
      p = c.parent_selector && d.querySelector(c.parent_selector);
      if (p && c.insert_before_selector) b = p.querySelector(c.insert_before_selector);
    } catch (e) { return warnDOM(m, e); }
    if (!p) return;
    for (var i = els.length - 1; i >= 0; i--) {
      var el = els[i];
      try {
        if (el !== b && (b ? el.nextElementSibling !== b : el.parentNode !== p || el.nextElementSibling)) {
          if (b) b.parentNode.insertBefore(el, b); else p.appendChild(el);
        }
        b = el;
      } catch (e) { warnDOM(m, e); }
    }
  }
  // hides adds to out, for the anti-flicker snippet's early CSS (_lift_css,
  // apply in lift.js), a rule hiding each DOM change's elements while the
  // snippet hides: on the visitor's next pages the original never shows
  // (a first page shows it until lift.js runs). A selector that could
  // break out of its rule, or any rule after it, is left out: one with a
  // brace, one querySelector refuses, one whose rule the browser does not
  // parse as one rule alone (an open bracket, an open string). A list
  // (a comma) goes inside :is(), so all of it is hidden only while the
  // snippet hides.
  var probe;
  function hides(ve, out) {
    (ve && ve.dom_changes || []).forEach(function (c) {
      var s = c && c.selector, r;
      if (typeof s !== 'string' || /[{}]/.test(s)) return;
      r = 'html.lift-hide ' + (s.indexOf(',') >= 0 ? ':is(' + s + ')' : s) + '{visibility:hidden!important}';
      try {
        d.querySelector(s);
        probe = probe || d.implementation.createHTMLDocument('').head.appendChild(d.createElement('style')).sheet;
        probe.insertRule(r, 0);
      } catch (e) { return; }
      if (out.indexOf(r) < 0) out.push(r);
    });
  }
