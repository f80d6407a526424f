package platform

import (
	"context"
	"strings"

	"github.com/liftab/lift/experiment"
)

// marketsQuery reads the shop's markets, each with its currency and
// countries, three a page: 2 + 1 + 3 × (1 + 2 + 252) = 768 points (a
// market sells to at most the 250 regions a page holds; there are fewer
// countries than that).
const marketsQuery = `query Markets($after: String) {
  markets(first: 3, after: $after) {
    pageInfo { hasNextPage endCursor }
    nodes {
      id name enabled
      currencySettings { baseCurrency { currencyCode } }
      regions(first: 250) { nodes { ... on MarketRegionCountry { code } } }
    }
  }
}`

// OpMarkets names the markets read, for Fail.
const OpMarkets = "Markets"

// fetchMarkets reads the shop's enabled markets into snap.Markets: the
// markets a price test may price (shared.price.markets). A disabled
// market sells to no one. A grant without read_markets leaves it nil.
func (c *Client) fetchMarkets(ctx context.Context, domain, token string, snap *experiment.CatalogSnapshot) error {
	snap.Markets = []experiment.Market{}
	var after any
	for {
		var page struct {
			Markets struct {
				PageInfo pageInfo `json:"pageInfo"`
				Nodes    []struct {
					ID               string `json:"id"`
					Name             string `json:"name"`
					Enabled          bool   `json:"enabled"`
					CurrencySettings struct {
						BaseCurrency struct {
							CurrencyCode string `json:"currencyCode"`
						} `json:"baseCurrency"`
					} `json:"currencySettings"`
					Regions struct {
						Nodes []struct {
							Code string `json:"code"`
						} `json:"nodes"`
					} `json:"regions"`
				} `json:"nodes"`
			} `json:"markets"`
		}
		err := c.graphQL(ctx, domain, token, OpMarkets, marketsQuery, map[string]any{"after": after}, &page)
		if notGranted(err) { // not read: a refresh keeps the mirror's
			snap.Markets = nil
			return nil
		}
		if err != nil {
			return err
		}
		for _, n := range page.Markets.Nodes {
			if !n.Enabled {
				continue
			}
			m := experiment.Market{ID: n.ID, Name: n.Name, Currency: n.CurrencySettings.BaseCurrency.CurrencyCode, Countries: []string{}}
			for _, r := range n.Regions.Nodes {
				if r.Code != "" { // a region that is not a country
					m.Countries = append(m.Countries, strings.ToUpper(r.Code))
				}
			}
			snap.Markets = append(snap.Markets, m)
		}
		next, more := page.Markets.PageInfo.next()
		if !more {
			return nil
		}
		after = next
	}
}
