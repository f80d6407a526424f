// The demo store's own behaviour: what a theme and the platform's web pixel
// do around lift.js (add to cart, checkout events, placing the order).
(function () {
  'use strict';
  function ready(fn) {
    var go = function () { (window.lift && window.lift.ready ? window.lift.ready : Promise.resolve()).then(fn, fn); };
    if (window.lift && window.lift.ready || document.readyState === 'complete') go();
    else window.addEventListener('load', function () { setTimeout(go, 0); });
  }
  function post(url, body) {
    return fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body) }).then(function (r) {
      return r.json().then(function (j) { if (!r.ok) throw new Error(j.message || r.status); return j; });
    });
  }
  var shop = new URLSearchParams(location.search).get('shop');
  var q = shop ? '?shop=' + encodeURIComponent(shop) : '';
  function track(name, payload) { if (window.lift) window.lift.track(name, payload); }

  ready(function () {
    var l = window.lift || {};
    var v = document.getElementById('lift-visitor'), g = document.getElementById('lift-groups');
    if (v) v.textContent = l.visitor || 'none';
    if (g) g.textContent = l.cartAttributes ? (l.cartAttributes()._lift_assignments || 'none') : 'none';
    document.documentElement.setAttribute('data-demo-ready', '1');
  });

  var form = document.getElementById('add-form');
  if (form) {
    var select = document.getElementById('variant');
    select.addEventListener('change', function () {
      Array.prototype.forEach.call(document.querySelectorAll('.prices .price'), function (el) {
        el.hidden = el.getAttribute('data-variant') !== select.value;
      });
    });
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      ready(function () {
        var opt = select.options[select.selectedIndex], shown = window.lift && window.lift.price(select.value);
        var price = shown ? Number(shown.amount) : Number(opt.getAttribute('data-price'));
        // The line's properties: the visitor's assignments while a
        // shipping test runs (its rates are quoted from the cart's lines).
        var props = window.lift && window.lift.lineProperties ? window.lift.lineProperties() : {};
        post('/demo/cart/add.js' + q, { variant_id: select.value, quantity: 1, price: price, properties: props }).then(function () {
          return window.lift && window.lift.syncCart ? window.lift.syncCart() : null;
        }).then(function () {
          track('product_added_to_cart', { productIds: [form.getAttribute('data-product-id')], variantIds: [select.value], quantity: 1 });
          document.getElementById('added').hidden = false;
        });
      });
    });
  }

  // The shipping options the carrier service quotes for this cart (and, in
  // a shipping test, this visitor's group), for the chosen destination.
  var country = document.getElementById('ship-country');
  if (country) {
    var list = document.getElementById('shipping-rates');
    var currency = document.getElementById('shipping').getAttribute('data-currency');
    var show = function () {
      list.setAttribute('data-state', 'loading');
      fetch('/demo/checkout/rates' + (q ? q + '&' : '?') + 'country=' + country.value, { credentials: 'same-origin' })
        .then(function (r) { return r.json().then(function (j) { if (!r.ok) throw new Error(j.message || r.status); return j; }); })
        .then(function (j) {
          list.innerHTML = '';
          (j.rates || []).forEach(function (rate, i) {
            var li = document.createElement('li');
            li.setAttribute('data-code', rate.service_code);
            li.setAttribute('data-total', rate.total_price);
            // One radio per rate, the first chosen: its service_code goes
            // with the order, which the server prices again (never from here).
            var label = document.createElement('label'), radio = document.createElement('input');
            radio.type = 'radio'; radio.name = 'shipping-rate'; radio.value = rate.service_code; radio.checked = i === 0;
            // total_price is in the currency's minor units.
            var fmt = new Intl.NumberFormat('en', { style: 'currency', currency: rate.currency || currency });
            label.appendChild(radio);
            label.appendChild(document.createTextNode(rate.service_name + ' — ' +
              fmt.format(Number(rate.total_price) / Math.pow(10, fmt.resolvedOptions().maximumFractionDigits))));
            li.appendChild(label);
            list.appendChild(li);
          });
          if (!list.children.length) list.innerHTML = '<li>No shipping to this destination.</li>';
          list.setAttribute('data-state', 'shown');
        }, function (err) {
          list.innerHTML = '';
          var li = document.createElement('li');
          li.textContent = 'Shipping rates failed: ' + err.message;
          list.appendChild(li);
          list.setAttribute('data-state', 'failed');
        });
    };
    country.addEventListener('change', show);
    ready(show);
  }
  // The shipping chosen for the order: {} while none is (no rates, or
  // still loading), and the order charges none.
  function shipping() {
    var chosen = document.querySelector('#shipping-rates input[name="shipping-rate"]:checked');
    return chosen ? { country: country.value, service_code: chosen.value } : {};
  }

  var place = document.getElementById('place-order');
  if (place) {
    var token = Math.random().toString(16).slice(2) + Date.now().toString(16);
    var lines = document.querySelectorAll('#checkout-lines li');
    var ids = function (a) { return Array.prototype.map.call(lines, function (li) { return li.getAttribute(a); }); };
    ready(function () { track('checkout_started', { checkoutToken: token, productIds: ids('data-product-id'), variantIds: ids('data-variant-id') }); });
    place.addEventListener('click', function () {
      place.disabled = true;
      ready(function () {
        post('/demo/checkout' + q, shipping()).then(function (o) {
          track('checkout_completed', { checkoutToken: token, orderId: o.order_id });
          document.getElementById('order-id').textContent = o.order_id;
          document.getElementById('order-confirmation').hidden = false;
          document.getElementById('order-confirmation').setAttribute('data-order-id', o.order_id);
        }, function (err) {
          var el = document.getElementById('order-error');
          el.textContent = 'Order failed: ' + err.message; el.hidden = false; place.disabled = false;
          if (country) country.dispatchEvent(new Event('change')); // the rates may have changed: quote again
        });
      });
    });
  }
})();
