package platform

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/liftab/lift/experiment"
)

// The install lifecycle's platform calls (experiment.InstallPlatform):
// OAuth at <shop>/oauth/authorize and <shop>/oauth/access_token, the rest
// as GraphQL Admin API operations (graphql.go). docs/install.md lists the
// operations.

var _ experiment.InstallPlatform = (*Client)(nil)

// AuthorizeURL implements experiment.InstallPlatform.
func (c *Client) AuthorizeURL(domain string, scopes []string, redirectURI, state string) string {
	q := url.Values{"client_id": {c.APIKey}, "scope": {strings.Join(scopes, ",")},
		"redirect_uri": {redirectURI}, "state": {state}}
	return c.shopBase(domain) + "/oauth/authorize?" + q.Encode()
}

// ExchangeCode implements experiment.InstallPlatform: POST
// <shop>/oauth/access_token {client_id, client_secret, code} →
// {access_token, scope}. Retried like a GraphQL call on 429 and 5xx.
func (c *Client) ExchangeCode(ctx context.Context, domain, code string) (experiment.AccessGrant, error) {
	const op = "exchange authorization code"
	body, _ := json.Marshal(map[string]string{"client_id": c.APIKey, "client_secret": c.APISecret, "code": code})
	var last *Error
	for n := 0; n < c.Retry.attempts(); n++ {
		status, _, raw, err := c.post(ctx, c.shopBase(domain)+"/oauth/access_token", "", body)
		switch {
		case err != nil:
			last = &Error{Op: op, Message: "platform unreachable: " + err.Error()}
		case status == http.StatusTooManyRequests || status >= 500:
			last = &Error{Op: op, Status: status, Message: errorText(raw, status)}
		case status >= 300:
			return experiment.AccessGrant{}, &Error{Op: op, Status: status, Message: errorText(raw, status)}
		default:
			var out struct {
				AccessToken string `json:"access_token"`
				Scope       string `json:"scope"`
			}
			if err := json.Unmarshal(raw, &out); err != nil || out.AccessToken == "" {
				return experiment.AccessGrant{}, &Error{Op: op, Status: status, Message: "no access token in the answer"}
			}
			return experiment.AccessGrant{AccessToken: out.AccessToken, Scopes: splitScopes(out.Scope)}, nil
		}
		if err := c.sleep(ctx, c.Retry.backoff(n)); err != nil {
			break
		}
	}
	return experiment.AccessGrant{}, last
}

func splitScopes(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// FetchShop implements experiment.InstallPlatform.
func (c *Client) FetchShop(ctx context.Context, domain, token string) (experiment.ShopInfo, error) {
	var out struct {
		Shop struct {
			Name         string `json:"name"`
			CurrencyCode string `json:"currencyCode"`
			IanaTimezone string `json:"ianaTimezone"`
		} `json:"shop"`
	}
	err := c.graphQL(ctx, domain, token, "Shop", `query Shop { shop { name currencyCode ianaTimezone } }`, nil, &out)
	return experiment.ShopInfo{Name: out.Shop.Name, Currency: out.Shop.CurrencyCode, Timezone: out.Shop.IanaTimezone}, err
}

type userErrors []userError

type userError struct {
	Code    string   `json:"code"` // where the payload's error type has one
	Field   []string `json:"field"`
	Message string   `json:"message"`
}

func (u userErrors) err(op string) error {
	if len(u) == 0 {
		return nil
	}
	return &Error{Op: op, Status: http.StatusUnprocessableEntity, Message: u[0].Message}
}

// SubscribeWebhook implements experiment.InstallPlatform with
// webhookSubscriptionCreate. The platform refuses a second subscription of
// a topic to the same address ("Address for this topic has already been
// taken"): an install run again (a retry after a later step failed, or
// OAuth once more on an installed shop) then reads the existing one's id.
func (c *Client) SubscribeWebhook(ctx context.Context, domain, token, topic, callbackURL string) (string, error) {
	var out struct {
		Create struct {
			Subscription *struct {
				ID string `json:"id"`
			} `json:"webhookSubscription"`
			UserErrors userErrors `json:"userErrors"`
		} `json:"webhookSubscriptionCreate"`
	}
	err := c.graphQL(ctx, domain, token, "WebhookSubscriptionCreate",
		`mutation WebhookSubscriptionCreate($topic: WebhookSubscriptionTopic!, $sub: WebhookSubscriptionInput!) {
  webhookSubscriptionCreate(topic: $topic, webhookSubscription: $sub) { webhookSubscription { id } userErrors { field message } } }`,
		map[string]any{"topic": topic, "sub": map[string]any{"callbackUrl": callbackURL, "format": "JSON"}}, &out)
	if err != nil {
		return "", err
	}
	if refused := out.Create.UserErrors.err("subscribe " + topic); refused != nil {
		if id, err := c.existingSubscription(ctx, domain, token, topic, callbackURL); err != nil || id != "" {
			return id, err
		}
		return "", refused
	}
	if out.Create.Subscription == nil {
		return "", &Error{Op: "subscribe " + topic, Message: "no subscription in the answer"}
	}
	return out.Create.Subscription.ID, nil
}

// existingSubscription is the id of the shop's subscription of topic to
// callbackURL, or "" when there is none.
func (c *Client) existingSubscription(ctx context.Context, domain, token, topic, callbackURL string) (string, error) {
	var out struct {
		Subs struct {
			Nodes []struct {
				ID string `json:"id"`
			} `json:"nodes"`
		} `json:"webhookSubscriptions"`
	}
	err := c.graphQL(ctx, domain, token, "WebhookSubscriptions",
		`query WebhookSubscriptions($topic: WebhookSubscriptionTopic!, $url: URL!) {
  webhookSubscriptions(first: 1, topics: [$topic], callbackUrl: $url) { nodes { id } } }`,
		map[string]any{"topic": topic, "url": callbackURL}, &out)
	if err != nil || len(out.Subs.Nodes) == 0 {
		return "", err
	}
	return out.Subs.Nodes[0].ID, nil
}

// productsQuery reads the catalog a page of variants at a time, each with
// its product: the platform prices a query before running it and refuses
// one over 1,000 points, and products(first: 50) { variants(first: 100) }
// asks for 5,000 variants (15,153 points). This costs 2 + 1 + 190 × 5 = 953.
// source is set on the duplicates Lift made for a live price test (launch.go),
// which are the shop's variants too but not its catalog.
const productsQuery = `query Products($after: String) {
  productVariants(first: 190, after: $after) {
    pageInfo { hasNextPage endCursor }
    nodes { id title sku price product { id title handle } inventoryItem { unitCost { amount } }
      source: metafield(namespace: "$app:lift", key: "source_variant_id") { value } }
  }
}`

type productPage struct {
	ProductVariants struct {
		PageInfo pageInfo `json:"pageInfo"`
		Nodes    []struct {
			variantNode
			Product struct {
				ID     string `json:"id"`
				Title  string `json:"title"`
				Handle string `json:"handle"`
			} `json:"product"`
		} `json:"nodes"`
	} `json:"productVariants"`
}

// variantNode is a variant as a catalog read answers it, in a page or in
// a line of the bulk file.
type variantNode struct {
	ID            string `json:"id"`
	Title         string `json:"title"`
	SKU           string `json:"sku"`
	Price         string `json:"price"`
	InventoryItem struct {
		UnitCost *struct {
			Amount string `json:"amount"`
		} `json:"unitCost"`
	} `json:"inventoryItem"`
	Source *mark `json:"source"` // set on Lift's duplicates only
}

// variant is the node as the mirror keeps it; ok is false for a duplicate
// Lift made for a live price test, which is not the merchant's catalog.
func (v variantNode) variant(productID string) (experiment.Variant, bool) {
	ev := experiment.Variant{ID: v.ID, ProductID: productID, Title: v.Title, SKU: v.SKU, Price: v.Price}
	if v.InventoryItem.UnitCost != nil {
		ev.Cost = v.InventoryItem.UnitCost.Amount
	}
	return ev, !v.Source.set()
}

// mark is one of Lift's metafields on what it made: the experiment_id of
// a function, the source_variant_id of a duplicate.
type mark struct {
	Value string `json:"value"`
}

func (m *mark) set() bool { return m != nil && m.Value != "" }

// next is the cursor of the page after this one; more is false at the
// end, and on a next page without a cursor, which would read the first
// page again for ever.
func (p pageInfo) next() (cursor string, more bool) {
	return p.EndCursor, p.HasNextPage && p.EndCursor != ""
}

type pageInfo struct {
	HasNextPage bool   `json:"hasNextPage"`
	EndCursor   string `json:"endCursor"`
}

// FetchCatalog implements experiment.InstallPlatform: product pages at
// most one per ProductInterval (part 8), then collections and themes,
// the delivery zones (delivery.go) and the markets (markets.go).
func (c *Client) FetchCatalog(ctx context.Context, domain, token string) (*experiment.CatalogSnapshot, error) {
	snap := &experiment.CatalogSnapshot{}
	if err := c.productWait(ctx, domain); err != nil {
		return nil, err
	}
	n, err := c.productCount(ctx, domain, token)
	if err != nil {
		return nil, err
	}
	if n > cmp.Or(c.BulkThreshold, DefaultBulkThreshold) {
		if err = c.productWait(ctx, domain); err == nil {
			snap.Products, err = c.bulkProducts(ctx, domain, token)
		}
	} else {
		snap.Products, err = c.pagedProducts(ctx, domain, token)
	}
	if err != nil {
		return nil, err
	}
	if err := c.fetchCollectionsAndThemes(ctx, domain, token, snap); err != nil {
		return nil, err
	}
	if err := c.fetchZones(ctx, domain, token, snap); err != nil {
		return nil, err
	}
	return snap, c.fetchMarkets(ctx, domain, token, snap)
}

// pagedProducts reads the catalog with productsQuery, a page at most one
// per ProductInterval.
func (c *Client) pagedProducts(ctx context.Context, domain, token string) ([]experiment.CatalogProduct, error) {
	var products []experiment.CatalogProduct
	index := map[string]int{} // product id → its place in products
	var after any
	for {
		if err := c.productWait(ctx, domain); err != nil {
			return nil, err
		}
		var page productPage
		if err := c.graphQL(ctx, domain, token, "Products", productsQuery, map[string]any{"after": after}, &page); err != nil {
			return nil, err
		}
		for _, v := range page.ProductVariants.Nodes {
			ev, ok := v.variant(v.Product.ID)
			if !ok {
				continue
			}
			p := v.Product
			i, seen := index[p.ID]
			if !seen { // a product's variants may span two pages
				i, index[p.ID] = len(products), len(products)
				products = append(products, experiment.CatalogProduct{Product: experiment.Product{ID: p.ID, Title: p.Title, Handle: p.Handle}})
			}
			products[i].Variants = append(products[i].Variants, ev)
		}
		next, more := page.ProductVariants.PageInfo.next()
		if !more {
			return products, nil
		}
		after = next
	}
}

// productWait takes the shop's next product-query slot (part 8: one per
// ProductInterval, default 1 s).
func (c *Client) productWait(ctx context.Context, domain string) error {
	every := c.ProductInterval
	if every <= 0 {
		every = time.Second
	}
	if err := c.sleep(ctx, c.throttle.productSlot(domain, every, c.now())); err != nil {
		return &Error{Op: "Products", Message: err.Error()}
	}
	return nil
}

// Collections and their products, then themes, each query under the
// platform's 1,000-point limit: collections(first: 250) { products(first:
// 250) } would ask 63,253 points. A page of 4 collections with their first
// 200 products costs 2 + 1 + 4 × (1 + 2 + 1 + 200) = 819; the rest of a
// larger collection is read 250 at a time (254 points).
const (
	collectionsQuery = `query Collections($after: String) {
  collections(first: 4, after: $after) {
    pageInfo { hasNextPage endCursor }
    nodes { id title products(first: 200) { pageInfo { hasNextPage endCursor } nodes { id } } }
  }
}`
	collectionProductsQuery = `query CollectionProducts($id: ID!, $after: String) {
  collection(id: $id) { products(first: 250, after: $after) { pageInfo { hasNextPage endCursor } nodes { id } } }
}`
	themesQuery = `query Themes { themes(first: 20) { nodes { id name role } } }`
)

// productIDs is a page of a collection's products.
type productIDs struct {
	PageInfo pageInfo `json:"pageInfo"`
	Nodes    []struct {
		ID string `json:"id"`
	} `json:"nodes"`
}

func (c *Client) fetchCollectionsAndThemes(ctx context.Context, domain, token string, snap *experiment.CatalogSnapshot) error {
	var after any
	for {
		var page struct {
			Collections struct {
				PageInfo pageInfo `json:"pageInfo"`
				Nodes    []struct {
					ID       string     `json:"id"`
					Title    string     `json:"title"`
					Products productIDs `json:"products"`
				} `json:"nodes"`
			} `json:"collections"`
		}
		if err := c.graphQL(ctx, domain, token, "Collections", collectionsQuery, map[string]any{"after": after}, &page); err != nil {
			return err
		}
		for _, col := range page.Collections.Nodes {
			ids, err := c.collectionProducts(ctx, domain, token, col.ID, col.Products)
			if err != nil {
				return err
			}
			snap.Collections = append(snap.Collections, experiment.Collection{ID: col.ID, Title: col.Title, ProductIDs: ids})
		}
		next, more := page.Collections.PageInfo.next()
		if !more {
			break
		}
		after = next
	}
	var out struct {
		Themes struct {
			Nodes []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
				Role string `json:"role"`
			} `json:"nodes"`
		} `json:"themes"`
	}
	if err := c.graphQL(ctx, domain, token, "Themes", themesQuery, nil, &out); err != nil {
		return err
	}
	for _, t := range out.Themes.Nodes {
		templates, err := c.themeTemplates(ctx, domain, token, t.ID)
		if err != nil {
			return err
		}
		snap.Themes = append(snap.Themes, experiment.Theme{ID: t.ID, Name: t.Name, Role: strings.ToLower(t.Role), Templates: templates})
	}
	return nil
}

// collectionProducts is every product id of a collection: the first page
// its collections page held, then the rest.
func (c *Client) collectionProducts(ctx context.Context, domain, token, id string, page productIDs) ([]string, error) {
	var ids []string
	for {
		for _, p := range page.Nodes {
			ids = append(ids, p.ID)
		}
		next, more := page.PageInfo.next()
		if !more {
			return ids, nil
		}
		var out struct {
			Collection *struct {
				Products productIDs `json:"products"`
			} `json:"collection"`
		}
		if err := c.graphQL(ctx, domain, token, "CollectionProducts", collectionProductsQuery,
			map[string]any{"id": id, "after": next}, &out); err != nil {
			return nil, err
		}
		if out.Collection == nil { // deleted while we read: what we have is all there is
			return ids, nil
		}
		page = out.Collection.Products
	}
}
