package demo

import (
	"maps"
	"math"
	"sync"
)

// Line is one cart line: a variant at the price the storefront showed,
// with the properties it was added with (the tracker's _lift_assignments
// while a shipping test runs: the platform's rate request reads lines).
type Line struct {
	ProductID  string            `json:"product_id"`
	VariantID  string            `json:"variant_id"`
	Title      string            `json:"title"`
	Quantity   int               `json:"quantity"`
	Price      float64           `json:"price"`
	Properties map[string]string `json:"properties"`
}

// same reports whether an add of variant at price with props goes to line
// l: as on the platform, one variant added with other properties is a line
// of its own.
func (l Line) same(variant string, price float64, props map[string]string) bool {
	return l.VariantID == variant && l.Price == price && maps.Equal(l.Properties, props)
}

// Cart is what a platform cart holds that an order needs: lines and the
// attributes storefront scripts set (the platform copies them to the
// order's note_attributes).
type Cart struct {
	Lines      []Line            `json:"items"`
	Attributes map[string]string `json:"attributes"`
}

// Total is the cart's value.
func (c Cart) Total() float64 {
	t := 0.0
	for _, l := range c.Lines {
		t += float64(l.Quantity) * l.Price
	}
	return math.Round(t*100) / 100
}

// Count is the number of items.
func (c Cart) Count() int {
	n := 0
	for _, l := range c.Lines {
		n += l.Quantity
	}
	return n
}

// carts keeps the demo's carts in memory, by cart token; a demo store needs
// no more (a restart empties them, as closing a demo tab would).
type carts struct {
	mu sync.Mutex
	m  map[string]*Cart
}

// maxCarts bounds the memory a flood of new visitors can take: past it the
// carts start over.
const maxCarts = 20_000

func (cs *carts) update(token string, fn func(c *Cart)) Cart {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.m[token]
	if !ok {
		if len(cs.m) >= maxCarts {
			clear(cs.m)
		}
		c = &Cart{Lines: []Line{}, Attributes: map[string]string{}}
		cs.m[token] = c
	}
	fn(c)
	out := Cart{Lines: append([]Line{}, c.Lines...), Attributes: make(map[string]string, len(c.Attributes))}
	for k, v := range c.Attributes {
		out.Attributes[k] = v
	}
	return out
}

// take returns the cart and empties it (a placed order).
func (cs *carts) take(token string) Cart {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.m[token]
	if !ok {
		return Cart{Lines: []Line{}, Attributes: map[string]string{}}
	}
	delete(cs.m, token)
	return *c
}
