// content.js shows what the visitor's groups change on the page (prices,
// images, content blocks, visual edits): part of lift.js's closure, put at
// its include line by tracker.go.

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
  // Prices and images are painted once every test is shown (paint).
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
    queueScript(t, group);
  }
  function productImages(ve) {
    return (ve && ve.images || []).filter(function (m) { return m && m.urls && m.urls.length; });
  }
  // paint writes the prices and images shown on the marked elements.
  function paint() { paintPrices(); paintImages(); }
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
  // code must break neither the page nor the tracker. (dom_changes,
  // authored in the admin panel, has no format Lift defines yet, so it is
  // not applied.)
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
