package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
)

// Product is one product of the demo store, read from a catalog in the
// import format (experiment/catalogdata).
type Product struct {
	ID       string    // numeric platform id, as storefronts and webhooks send it
	Title    string    `json:"title"`
	Handle   string    `json:"handle"`
	Variants []Variant `json:"variants"`
}

// Variant is a product's variant with its catalog price.
type Variant struct {
	ID    string  // numeric
	Title string  `json:"title"`
	Price float64 // catalog price; a price test's group may show another
}

// Catalog is the store's products and currency.
type Catalog struct {
	Currency string
	Products []Product
}

var trailingDigits = regexp.MustCompile(`[0-9]+$`)

// ParseCatalog reads the products of a catalog import file.
func ParseCatalog(raw []byte) (*Catalog, error) {
	var f struct {
		Currency string `json:"currency"`
		Products []struct {
			ID       string `json:"id"`
			Title    string `json:"title"`
			Handle   string `json:"handle"`
			Variants []struct {
				ID    string `json:"id"`
				Title string `json:"title"`
				Price string `json:"price"`
			} `json:"variants"`
		} `json:"products"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("demo catalog: %w", err)
	}
	c := &Catalog{Currency: f.Currency}
	for _, p := range f.Products {
		prod := Product{ID: trailingDigits.FindString(p.ID), Title: p.Title, Handle: p.Handle}
		for _, v := range p.Variants {
			price, err := strconv.ParseFloat(v.Price, 64)
			if err != nil {
				return nil, fmt.Errorf("demo catalog: variant %s price %q: %w", v.ID, v.Price, err)
			}
			prod.Variants = append(prod.Variants, Variant{ID: trailingDigits.FindString(v.ID), Title: v.Title, Price: price})
		}
		c.Products = append(c.Products, prod)
	}
	return c, nil
}

// product finds a product by numeric id.
func (c *Catalog) product(id string) *Product {
	for i := range c.Products {
		if c.Products[i].ID == id {
			return &c.Products[i]
		}
	}
	return nil
}

// variant finds a variant and its product by numeric variant id.
func (c *Catalog) variant(id string) (*Product, *Variant) {
	for i := range c.Products {
		for j := range c.Products[i].Variants {
			if c.Products[i].Variants[j].ID == id {
				return &c.Products[i], &c.Products[i].Variants[j]
			}
		}
	}
	return nil, nil
}
