package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/experiment"
)

// CatalogFile is the catalog import format (docs/tests-api.md): what `lift
// seed --catalog FILE.json` reads and what the embedded demo catalog is
// written in. Importing replaces the shop's whole catalog mirror.
type CatalogFile struct {
	Currency      string                  `json:"currency"`
	Products      []CatalogProduct        `json:"products"`
	Collections   []experiment.Collection `json:"collections"`
	Themes        []experiment.Theme      `json:"themes"`
	DeliveryZones []experiment.Zone       `json:"delivery_zones"`
	Markets       []experiment.Market     `json:"markets"`
}

// Snapshot is the file's catalog as a platform read would give it: what
// the fake platform of lift dev and of the tests sells.
func (f *CatalogFile) Snapshot() *experiment.CatalogSnapshot {
	snap := &experiment.CatalogSnapshot{Currency: f.Currency, Collections: f.Collections, Themes: f.Themes,
		DeliveryZones: f.DeliveryZones, Markets: f.Markets}
	for _, p := range f.Products {
		snap.Products = append(snap.Products, experiment.CatalogProduct{Product: p.Product, Variants: p.Variants})
	}
	return snap
}

// CatalogProduct is a product with its variants.
type CatalogProduct struct {
	experiment.Product
	Variants []experiment.Variant `json:"variants"`
}

var (
	catalogGID    = regexp.MustCompile(`^gid://[a-z0-9_-]+/[A-Za-z]+/[0-9]+$`)
	catalogAmount = regexp.MustCompile(`^[0-9]+(\.[0-9]{1,4})?$`)
)

// ParseCatalog reads and checks a catalog file: ids are global ids, amounts
// decimal strings, every currency a three-letter code. It names the first
// problem by JSON path.
func ParseCatalog(raw []byte) (*CatalogFile, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var f CatalogFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("store.ParseCatalog: %w", err)
	}
	bad := func(path, format string, args ...any) error {
		return fmt.Errorf("store.ParseCatalog: %s: %s", path, fmt.Sprintf(format, args...))
	}
	if len(f.Currency) != 3 {
		return nil, bad("currency", "a three-letter currency code is required")
	}
	seen := map[string]string{}
	dup := func(path, id string) error {
		if prev, ok := seen[id]; ok {
			return bad(path, "%s is also %s; every id appears once", id, prev)
		}
		seen[id] = path
		return nil
	}
	for i, p := range f.Products {
		if err := dup(fmt.Sprintf("products[%d].id", i), p.ID); err != nil {
			return nil, err
		}
		for j, v := range p.Variants {
			if err := dup(fmt.Sprintf("products[%d].variants[%d].id", i, j), v.ID); err != nil {
				return nil, err
			}
		}
	}
	for i, c := range f.Collections {
		if err := dup(fmt.Sprintf("collections[%d].id", i), c.ID); err != nil {
			return nil, err
		}
	}
	for i, t := range f.Themes {
		if err := dup(fmt.Sprintf("themes[%d].id", i), t.ID); err != nil {
			return nil, err
		}
	}
	for i, z := range f.DeliveryZones {
		if err := dup(fmt.Sprintf("delivery_zones[%d].id", i), z.ID); err != nil {
			return nil, err
		}
		for j, r := range z.Rates {
			if err := dup(fmt.Sprintf("delivery_zones[%d].rates[%d].id", i, j), r.ID); err != nil {
				return nil, err
			}
		}
	}
	for i, m := range f.Markets {
		if err := dup(fmt.Sprintf("markets[%d].id", i), m.ID); err != nil {
			return nil, err
		}
	}
	for i, p := range f.Products {
		if !catalogGID.MatchString(p.ID) {
			return nil, bad(fmt.Sprintf("products[%d].id", i), "%q is not a global id", p.ID)
		}
		for j, v := range p.Variants {
			path := fmt.Sprintf("products[%d].variants[%d]", i, j)
			if !catalogGID.MatchString(v.ID) {
				return nil, bad(path+".id", "%q is not a global id", v.ID)
			}
			if v.ProductID != "" && v.ProductID != p.ID {
				return nil, bad(path+".product_id", "names another product")
			}
			if !catalogAmount.MatchString(v.Price) {
				return nil, bad(path+".price", "%q is not a decimal amount", v.Price)
			}
			if v.Cost != "" && !catalogAmount.MatchString(v.Cost) {
				return nil, bad(path+".cost", "%q is not a decimal amount", v.Cost)
			}
		}
	}
	for i, z := range f.DeliveryZones {
		if !catalogGID.MatchString(z.ID) {
			return nil, bad(fmt.Sprintf("delivery_zones[%d].id", i), "%q is not a global id", z.ID)
		}
		if z.RestOfWorld && len(z.Countries) > 0 {
			return nil, bad(fmt.Sprintf("delivery_zones[%d].countries", i), "a rest-of-world zone ships to every country no other zone lists, and lists none")
		}
		for j, r := range z.Rates {
			if !catalogGID.MatchString(r.ID) || !catalogAmount.MatchString(r.Price) {
				return nil, bad(fmt.Sprintf("delivery_zones[%d].rates[%d]", i, j), "needs a global id and a decimal price")
			}
			if (r.MinSubtotal != "" && !catalogAmount.MatchString(r.MinSubtotal)) || (r.MaxSubtotal != "" && !catalogAmount.MatchString(r.MaxSubtotal)) ||
				r.MinGrams < 0 || r.MaxGrams < 0 {
				return nil, bad(fmt.Sprintf("delivery_zones[%d].rates[%d]", i, j), "min_subtotal and max_subtotal are decimal amounts, min_grams and max_grams at least 0")
			}
		}
	}
	for i, m := range f.Markets {
		if !catalogGID.MatchString(m.ID) || len(m.Currency) != 3 {
			return nil, bad(fmt.Sprintf("markets[%d]", i), "needs a global id and a three-letter currency")
		}
	}
	return &f, nil
}

// ImportCatalog replaces the shop's catalog mirror with f and sets the shop's
// currency, in q's transaction.
func importCatalog(ctx context.Context, q querier, shopID int64, f *CatalogFile) error {
	wrap := func(err error) error { return fmt.Errorf("store.ImportCatalog shop %d: %w", shopID, err) }
	for _, table := range []string{"catalog_delivery_rates", "catalog_delivery_zones", "catalog_variants",
		"catalog_products", "catalog_collections", "catalog_themes", "catalog_markets"} {
		if _, err := q.Exec(ctx, "DELETE FROM "+table+" WHERE shop_id=$1", shopID); err != nil {
			return wrap(err)
		}
	}
	if _, err := q.Exec(ctx, "UPDATE shops SET currency=$2, updated_at=now() WHERE id=$1", shopID, f.Currency); err != nil {
		return wrap(err)
	}
	if err := insertProducts(ctx, q, shopID, f.Products); err != nil {
		return wrap(err)
	}
	for _, c := range f.Collections {
		if _, err := q.Exec(ctx, `INSERT INTO catalog_collections (shop_id, id, title, product_ids) VALUES ($1,$2,$3,$4)`,
			shopID, c.ID, c.Title, nonNilStrings(c.ProductIDs)); err != nil {
			return wrap(err)
		}
	}
	for _, t := range f.Themes {
		role := t.Role
		if role == "" {
			role = "unpublished"
		}
		if _, err := q.Exec(ctx, `INSERT INTO catalog_themes (shop_id, id, name, role, templates) VALUES ($1,$2,$3,$4,$5)`,
			shopID, t.ID, t.Name, role, nonNilStrings(t.Templates)); err != nil {
			return wrap(err)
		}
	}
	for _, z := range f.DeliveryZones {
		if _, err := q.Exec(ctx, `INSERT INTO catalog_delivery_zones (shop_id, id, name, countries, lift_rates, rest_of_world) VALUES ($1,$2,$3,$4,$5,$6)`,
			shopID, z.ID, z.Name, nonNilStrings(z.Countries), z.LiftRates, z.RestOfWorld); err != nil {
			return wrap(err)
		}
		for _, r := range z.Rates {
			if _, err := q.Exec(ctx, `INSERT INTO catalog_delivery_rates (shop_id, id, zone_id, name, price,
					min_subtotal, max_subtotal, min_grams, max_grams)
				VALUES ($1,$2,$3,$4,$5::numeric, NULLIF($6, '')::numeric, NULLIF($7, '')::numeric, $8, $9)`,
				shopID, r.ID, z.ID, r.Name, r.Price, r.MinSubtotal, r.MaxSubtotal, r.MinGrams, r.MaxGrams); err != nil {
				return wrap(err)
			}
		}
	}
	for _, m := range f.Markets {
		if _, err := q.Exec(ctx, `INSERT INTO catalog_markets (shop_id, id, name, currency, countries) VALUES ($1,$2,$3,$4,$5)`,
			shopID, m.ID, m.Name, m.Currency, nonNilStrings(m.Countries)); err != nil {
			return wrap(err)
		}
	}
	return nil
}

// insertProducts writes the products and their variants, one statement a
// table: a row a statement took about 85 µs a row here (2.6 s for 5,000
// products of 5 variants), so a large shop's install or catalog refresh
// would outrun the write's time budget (http.write_timeout).
func insertProducts(ctx context.Context, q querier, shopID int64, products []CatalogProduct) error {
	var pid, ptitle, handle []string
	var vid, vproduct, vtitle, sku, price []string
	var cost []*string
	for _, p := range products {
		pid, ptitle, handle = append(pid, p.ID), append(ptitle, p.Title), append(handle, p.Handle)
		for _, v := range p.Variants {
			vid, vproduct, vtitle, sku, price = append(vid, v.ID), append(vproduct, p.ID), append(vtitle, v.Title), append(sku, v.SKU), append(price, v.Price)
			var c *string
			if v.Cost != "" {
				c = &v.Cost
			}
			cost = append(cost, c)
		}
	}
	if _, err := q.Exec(ctx, `INSERT INTO catalog_products (shop_id, id, title, handle)
		SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[])`, shopID, pid, ptitle, handle); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `INSERT INTO catalog_variants (shop_id, id, product_id, title, sku, price, cost)
		SELECT $1, id, product_id, title, sku, price::numeric, cost::numeric
		FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS v(id, product_id, title, sku, price, cost)`,
		shopID, vid, vproduct, vtitle, sku, price, cost)
	return err
}

// Catalog reads the catalog mirror for validation; it implements
// experiment.Catalog.
type Catalog struct{ Q querier }

// The mirror's kinds as both readers select and scan them: Lookup the rows
// a test names (… AND id = ANY($2)), ReadCatalog (install_catalog.go) all
// of a shop's.
const (
	variantColumns   = `id, product_id, title, sku, price::text, coalesce(cost::text, '')`
	selectProducts   = `SELECT id, title, handle FROM catalog_products WHERE shop_id=$1`
	selectVariants   = `SELECT ` + variantColumns + ` FROM catalog_variants WHERE shop_id=$1`
	selectCollection = `SELECT id, title, product_ids FROM catalog_collections WHERE shop_id=$1`
	selectThemes     = `SELECT id, name, role, templates FROM catalog_themes WHERE shop_id=$1`
	selectMarkets    = `SELECT id, name, currency, countries FROM catalog_markets WHERE shop_id=$1`
	// One row per rate; a zone without rates comes once with NULLs.
	selectZoneRates = `SELECT z.id, z.name, z.countries, z.lift_rates, z.rest_of_world, r.id, r.name, r.price::text,
		coalesce(r.min_subtotal::text, ''), coalesce(r.max_subtotal::text, ''), coalesce(r.min_grams, 0), coalesce(r.max_grams, 0)
		FROM catalog_delivery_zones z LEFT JOIN catalog_delivery_rates r ON r.shop_id = z.shop_id AND r.zone_id = z.id
		WHERE z.shop_id=$1`
)

func scanProduct(row pgx.Rows) (x experiment.Product, err error) {
	return x, row.Scan(&x.ID, &x.Title, &x.Handle)
}

func scanVariant(row pgx.Rows) (x experiment.Variant, err error) {
	return x, row.Scan(&x.ID, &x.ProductID, &x.Title, &x.SKU, &x.Price, &x.Cost)
}

func scanCollection(row pgx.Rows) (x experiment.Collection, err error) {
	return x, row.Scan(&x.ID, &x.Title, &x.ProductIDs)
}

func scanTheme(row pgx.Rows) (x experiment.Theme, err error) {
	return x, row.Scan(&x.ID, &x.Name, &x.Role, &x.Templates)
}

func scanMarket(row pgx.Rows) (x experiment.Market, err error) {
	return x, row.Scan(&x.ID, &x.Name, &x.Currency, &x.Countries)
}

// scanZoneRate reads a row of selectZoneRates: the zone (without rates)
// and its rate, nil for a zone without any.
func scanZoneRate(row pgx.Rows) (experiment.Zone, *experiment.ZoneRate, error) {
	var z experiment.Zone
	var rid, rname, rprice *string
	var r experiment.ZoneRate
	if err := row.Scan(&z.ID, &z.Name, &z.Countries, &z.LiftRates, &z.RestOfWorld, &rid, &rname, &rprice,
		&r.MinSubtotal, &r.MaxSubtotal, &r.MinGrams, &r.MaxGrams); err != nil || rid == nil {
		return z, nil, err
	}
	r.ID, r.Name, r.Price = *rid, derefString(rname), derefString(rprice)
	return z, &r, nil
}

// into scans each row with scan and files it with add.
func into[T any](scan func(pgx.Rows) (T, error), add func(T)) func(pgx.Rows) error {
	return func(row pgx.Rows) error {
		x, err := scan(row)
		if err == nil {
			add(x)
		}
		return err
	}
}

// Lookup implements experiment.Catalog with one query per kind named.
func (c Catalog) Lookup(ctx context.Context, shopID int64, r experiment.CatalogRefs) (*experiment.CatalogView, error) {
	v := &experiment.CatalogView{Products: map[string]experiment.Product{}, Variants: map[string]experiment.Variant{},
		Collections: map[string]experiment.Collection{}, Themes: map[string]experiment.Theme{},
		Zones: map[string]experiment.Zone{}, Markets: map[string]experiment.Market{}, Floors: map[string]experiment.Item{}}
	// Variants named themselves, and every variant of the products named
	// for it (a fixed discount is checked against the cheapest).
	variant := into(scanVariant, func(x experiment.Variant) { v.Variants[x.ID] = x })
	const byID = ` AND id = ANY($2)`
	err := errors.Join(
		lookup(ctx, c.Q, shopID, r.Products, selectProducts+byID, into(scanProduct, func(x experiment.Product) { v.Products[x.ID] = x })),
		lookup(ctx, c.Q, shopID, r.Variants, selectVariants+byID, variant),
		lookup(ctx, c.Q, shopID, r.ProductVariants, selectVariants+` AND product_id = ANY($2)`, variant),
		lookup(ctx, c.Q, shopID, r.Collections, selectCollection+byID,
			into(scanCollection, func(x experiment.Collection) { v.Collections[x.ID] = x })),
		lookupFloors(ctx, c.Q, shopID, r.CollectionFloors, v.Floors),
		lookupDearest(ctx, c.Q, shopID, r.Dearest, v),
		lookup(ctx, c.Q, shopID, r.Themes, selectThemes+byID, into(scanTheme, func(x experiment.Theme) { v.Themes[x.ID] = x })),
		lookupZones(ctx, c.Q, shopID, r.Zones, ` AND z.id = ANY($2)`, v.Zones),
		lookupZones(ctx, c.Q, shopID, r.ZoneCountries, ` AND (z.countries && $2 OR z.rest_of_world)`, v.Zones),
		lookup(ctx, c.Q, shopID, r.Markets, selectMarkets+byID, into(scanMarket, func(x experiment.Market) { v.Markets[x.ID] = x })),
	)
	if err != nil {
		return nil, fmt.Errorf("store.Catalog.Lookup shop %d: %w", shopID, err)
	}
	return v, nil
}

// lookupZones reads the zones where (a condition on $2, ids) holds, each
// with its rates, into zones; a zone read twice is read whole both times.
func lookupZones(ctx context.Context, q querier, shopID int64, ids []string, where string, zones map[string]experiment.Zone) error {
	got := map[string]experiment.Zone{}
	err := lookup(ctx, q, shopID, ids, selectZoneRates+where+` ORDER BY z.id, r.id`, func(row pgx.Rows) error {
		z, rate, err := scanZoneRate(row)
		if err != nil {
			return err
		}
		if prev, ok := got[z.ID]; ok {
			z = prev
		}
		if rate != nil {
			z.Rates = append(z.Rates, *rate)
		}
		got[z.ID] = z
		return nil
	})
	maps.Copy(zones, got)
	return err
}

// lookupFloors finds the cheapest item of each collection of ids into
// floors: one row a collection, computed here rather than by reading
// every variant of a large collection into the domain. Ties go to the
// lower variant id in byte order, as the domain breaks them.
func lookupFloors(ctx context.Context, q querier, shopID int64, ids []string, floors map[string]experiment.Item) error {
	return lookup(ctx, q, shopID, ids, `SELECT DISTINCT ON (c.id) c.id, p.title, p.handle,
			v.id, v.product_id, v.title, v.sku, v.price::text, coalesce(v.cost::text, '')
		FROM catalog_collections c
		JOIN catalog_variants v ON v.shop_id = c.shop_id AND v.product_id = ANY(c.product_ids)
		JOIN catalog_products p ON p.shop_id = v.shop_id AND p.id = v.product_id
		WHERE c.shop_id=$1 AND c.id = ANY($2)
		ORDER BY c.id, v.price, v.id COLLATE "C"`,
		func(row pgx.Rows) error {
			var id string
			var x experiment.Item
			err := row.Scan(&id, &x.Product.Title, &x.Product.Handle,
				&x.Variant.ID, &x.Variant.ProductID, &x.Variant.Title, &x.Variant.SKU, &x.Variant.Price, &x.Variant.Cost)
			x.Product.ID = x.Variant.ProductID
			floors[id] = x
			return err
		})
}

// lookupDearest sets the view's Dearest to the shop's highest-priced
// variant when want asks for it (ties to the lower id in byte order, as
// the domain breaks them); a shop without variants leaves it nil.
func lookupDearest(ctx context.Context, q querier, shopID int64, want bool, v *experiment.CatalogView) error {
	if !want {
		return nil
	}
	var x experiment.Item
	err := q.QueryRow(ctx, `SELECT p.title, p.handle, v.id, v.product_id, v.title, v.sku, v.price::text, coalesce(v.cost::text, '')
		FROM catalog_variants v JOIN catalog_products p ON p.shop_id = v.shop_id AND p.id = v.product_id
		WHERE v.shop_id=$1 ORDER BY v.price DESC, v.id COLLATE "C" LIMIT 1`, shopID).Scan(&x.Product.Title, &x.Product.Handle,
		&x.Variant.ID, &x.Variant.ProductID, &x.Variant.Title, &x.Variant.SKU, &x.Variant.Price, &x.Variant.Cost)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	x.Product.ID = x.Variant.ProductID
	v.Dearest = &x
	return nil
}

// lookup runs one catalog query for ids (none: no query) and hands each row
// to scan.
func lookup(ctx context.Context, q querier, shopID int64, ids []string, sql string, scan func(pgx.Rows) error) error {
	if len(ids) == 0 {
		return nil
	}
	return scanEach(ctx, q, sql, scan, shopID, ids)
}

// scanEach runs sql with args and hands each row to scan.
func scanEach(ctx context.Context, q querier, sql string, scan func(pgx.Rows) error, args ...any) error {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func nonNilStrings(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// ImportCatalog replaces the shop's catalog mirror with f in one audited
// write (`lift seed`, `lift dev`).
func (db *DB) ImportCatalog(ctx context.Context, shopID int64, f *CatalogFile) error {
	_, err := db.Write(ctx, experiment.WriteMeta{ShopID: shopID, Action: "catalog.import", ResourceType: "catalog"},
		func(ctx context.Context, tx *Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{ResourceID: fmt.Sprint(shopID)}, importCatalog(ctx, tx.tx, shopID, f)
		})
	return err
}
