// nav.js is the part of the storefront tracker that moves the visitor to
// other pages: URL redirects, preview themes, template views, and the
// routes of a storefront that routes in the browser. It is no script of its
// own: tracker.go serves lift.js with this file in place of its include
// line, inside the tracker's closure, whose names it uses.

  // A page reached by a Lift redirect in this tab is not redirected again:
  // two tests sending A to B and B to A would otherwise bounce the visitor
  // between them for good, on a hidden page. The redirect leaves the path it
  // goes to in sessionStorage (_lift_hop); the next page reads and clears it.
  var hop = get(ss, '_lift_hop'), hopped = hop === location.pathname, hopTo = '';
  if (hop !== null) try { ss.removeItem('_lift_hop'); } catch (e) { /* blocked */ }

  // navigate returns a URL the visitor should see instead of this page, or ''.
  function navigate(t, group) {
    var path = location.pathname, scope = t.scope || {};
    var r = changes(t, group, 'url_redirect');
    if (!hopped && r && r.destination && scope.url_redirect && pathMatches(scope.url_redirect, path)) {
      var dest = new URL(r.destination, location.href);
      if (dest.href !== location.href && dest.pathname !== path) {
        // The visitor keeps its landing query (utm_*, gclid, the shop's
        // own), as the control's visitors do, or the shop's analytics would
        // see the variant's visitors as direct traffic; the destination's
        // own parameters win. So does the #fragment.
        var own = new URLSearchParams(dest.search);
        new URLSearchParams(location.search).forEach(function (v, k) {
          if (!own.has(k)) dest.searchParams.append(k, v);
        });
        if (!dest.hash) dest.hash = location.hash;
        hopTo = dest.pathname;
        return dest.href;
      }
    }
    var u = new URL(location.href), moved = false;
    var th = changes(t, group, 'theme'), rules = scope.theme && scope.theme.path_rules;
    if (th && th.theme_id && (!rules || !rules.length || rules.some(function (x) { return pathMatches(x, path); }))) {
      // The platform keeps a preview theme for the session (Shopify.theme
      // is the theme this page renders in): only a page in another theme
      // needs the parameter, or every page would load twice.
      var rendered = w.Shopify && w.Shopify.theme && w.Shopify.theme.id;
      if (String(rendered) !== digits(th.theme_id) && u.searchParams.get('preview_theme_id') !== digits(th.theme_id)) {
        u.searchParams.set('preview_theme_id', digits(th.theme_id)); moved = true;
      }
    }
    var tp = changes(t, group, 'template');
    if (tp && tp.template && tp.template.split('.')[0] === page.type) {
      var view = tp.template.split('.').slice(1).join('.');
      if (view && u.searchParams.get('view') !== view) { u.searchParams.set('view', view); moved = true; }
    }
    return moved ? u.href : '';
  }

  // leaves adds to away the pages group g of test t sends its visitors
  // away from (p a path, m 1 for a prefix): a URL redirect's source; a
  // theme's pages, which move to the preview theme on a session's first
  // page only (s 1: the platform keeps it for the session); and a template's
  // pages (m 2: p is the pattern of their paths) opened without its view (v, as
  // the query carries it), as from a search result or a typed address.
  function leaves(t, g, away) {
    var scope = t.scope || {}, r = changes(t, g, 'url_redirect'), th = changes(t, g, 'theme');
    var tp = changes(t, g, 'template'), parts = tp && tp.template ? tp.template.split('.') : [];
    var rule = function (x, s) { away.push({ p: x.path || x.source_path, m: x.match_type === 'prefix' ? 1 : 0, s: s }); };
    if (r && r.destination && scope.url_redirect) rule(scope.url_redirect, 0);
    if (th && th.theme_id) {
      var rules = scope.theme && scope.theme.path_rules;
      (rules && rules.length ? rules : [{ path: '/', match_type: 'prefix' }]).forEach(function (x) { rule(x, 1); });
    }
    var path = pagePaths[parts[0]], view = parts.slice(1).join('.');
    if (path && view) away.push({ p: path, m: 2, v: encodeURIComponent(view) });
  }

  // A template test moves every page of its type to ?view=…: links to such
  // pages (known by their paths, as the platform names them, whatever comes
  // before: a locale, a collection before a product) get the view when
  // clicked, so the visitor goes there in one load instead of loading the
  // page and being moved again on each of them.
  var pagePaths = { product: '/products/[^/]+/?$', collection: '/collections/[^/]+/?$', page: '/pages/[^/]+/?$',
    blog: '/blogs/[^/]+/?$', article: '/blogs/[^/]+/[^/]+/?$', search: '/search/?$', cart: '/cart/?$' };
  var views = [];
  function carryView(t, g) {
    var tp = changes(t, g, 'template'), parts = tp && tp.template ? tp.template.split('.') : [];
    var path = pagePaths[parts[0]], view = parts.slice(1).join('.');
    if (path && view) views.push({ re: new RegExp(path), view: view });
  }
  if (d.addEventListener) d.addEventListener('click', function (e) {
    var a = e.target && e.target.closest ? e.target.closest('a[href]') : null, u;
    if (!a || !views.length) return;
    try { u = new URL(a.href, location.href); } catch (x) { return; }
    if (u.origin !== location.origin) return;
    for (var i = 0; i < views.length; i++) {
      if (views[i].re.test(u.pathname)) {
        if (u.searchParams.get('view') !== views[i].view) { u.searchParams.set('view', views[i].view); a.href = u.href; }
        return;
      }
    }
  }, true);

  // leave sends the visitor to go; the next page tracks the view, and this
  // one is never ready.
  function leave(go) {
    flush(); // calls the shop made before: beacons outlive the page
    if (hopTo) set(ss, '_lift_hop', hopTo);
    location.replace(go);
    return new Promise(function () {});
  }

  // A storefront that routes in the browser (a headless one:
  // history.pushState, the back button) changes pages without loading a
  // document. route() takes a new path as a page load: its redirects apply
  // and its view is sent, once, however many of the hooks and lift.page()
  // report it (a query or #fragment change is no new page). The visitor's
  // groups and their lateness stay those of the document (nothing is drawn
  // again), and the route shows what the document shows (showRoute).
  function route() {
    if (!current || !lift.session || location.pathname === here) return;
    ref = hereURL; hereURL = location.href; here = location.pathname; page = readPage();
    hopped = false; // the loop stop holds for the document a redirect opened
    var go = '';
    (current.cfg.tests || []).forEach(function (t) {
      var a = lift.assignments[t.id];
      if (a && a.group >= 0 && !a.late) go = go || navigate(t, a.group);
    });
    if (go) return leave(go);
    showRoute();
    sendView();
  }

  // showRoute shows on a route what its document shows: the groups the
  // document showed (showing: on time, or from the config it kept), with
  // their prices and content blocks; a test late there or without the
  // visitor, the control's blocks and the catalog's prices, as on the
  // document, so what a route shows, lift.price() and the cart attributes
  // agree. Previews and QA views show their groups, and are counted no
  // more than on the document. Each route view runs the custom_js of those
  // groups once, as a page load does: a script may meet elements it
  // changed on an earlier route (a layout the router keeps), so it must
  // be written to run more than once.
  function showRoute() {
    paintRoute();
    watch();
    showing.forEach(function (s) { queueScript(s.t, s.group); });
    runScripts();
  }
  function paintRoute() {
    var on = {};
    showing.forEach(function (s) { on[s.t.id] = 1; blocks(s.t, s.group); });
    (current.cfg.tests || []).forEach(function (t) { if (!on[t.id]) blocks(t, 0); });
    paint();
  }
  // A router renders a route when it has it: a task after the address
  // changes, or once the route's data is fetched; a headless storefront
  // renders its first page's prices, or hydrates them anew, after the
  // tracker has painted the document (run(), in lift.js). For that time an
  // observer paints the marked elements, and makes the DOM changes on the
  // elements their selectors match (paintDOM, in content.js), as they
  // appear, or as the page changes their variant, text, content, image
  // (src, srcset) or an attribute a DOM change writes in place, as a route shows them (paintRoute: nothing
  // drawn or counted again); it runs before
  // the browser paints them, so the catalog's price or the product's own
  // image never shows. It stops patience (10 s) after the last of the
  // document's paints (a kept config and then the network's may each paint
  // it) and route changes: the tracker gives up on a request of its own by
  // then, so a page or route whose data takes longer has as good as failed,
  // and past it an observer of the whole document would paint again on
  // every change of a long-lived page (a carousel, a countdown) for the
  // tab's life. An element rendered later takes its price from lift.price().
  var watcher = null, unwatch = 0;
  function watch() {
    // A shop without tests has nothing to paint: no observer of its pages.
    if (!w.MutationObserver || !(current.cfg.tests || []).length) return;
    watcher = watcher || new MutationObserver(function () { paintRoute(); watcher.takeRecords(); });
    watcher.observe(html, { childList: true, subtree: true, characterData: true,
      attributeFilter: ['data-lift-variant-id', 'data-lift-product-image', 'src', 'srcset'].concat(domAttributes()) });
    clearTimeout(unwatch);
    unwatch = setTimeout(function () { watcher.disconnect(); }, patience);
  }
  // The hooks wait a task, so a router that renders the route as it changes
  // the address has done so when route() reads the page's marks. One that
  // renders later sets data-routes="manual" on the script tag and calls
  // lift.page() once the route is rendered.
  if (attr('data-routes') !== 'manual' && w.history) {
    var later = function () { if (location.pathname !== here) setTimeout(lift.page, 0); };
    ['pushState', 'replaceState'].forEach(function (m) {
      var f = history[m];
      if (typeof f === 'function') history[m] = function () { var r = f.apply(this, arguments); later(); return r; };
    });
    w.addEventListener('popstate', later);
  }
