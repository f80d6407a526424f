package api

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/gin-gonic/gin"
)

// forwardedHeaders are the request headers a proxy or CDN in front of Lift
// sets about the client: its address, the host and scheme it reached, its
// country. Anyone can send them, so they mean something only from a proxy
// the operator named.
// They are in Go's canonical spelling, so they are deleted from the header
// map as they are, without re-spelling each name on every request.
var forwardedHeaders = []string{
	"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Port", "X-Forwarded-Prefix",
	"Forwarded", "X-Real-Ip", "Cf-Connecting-Ip", "True-Client-Ip",
	"Cf-Ipcountry", "Cloudfront-Viewer-Country", "X-Vercel-Ip-Country", "X-Country-Code",
}

// TrustProxies makes e believe forwarded headers only from a direct peer in
// cidrs (CIDRs or single addresses; none: nobody). gin's ClientIP then reads
// X-Forwarded-For only from those peers, and from any other peer every
// forwarded header is removed before a handler sees it, so a handler reading
// X-Forwarded-Host or CF-IPCountry cannot be fooled by a client. Call it
// before routes are added: gin gives a route the middleware in place then.
func TrustProxies(e *gin.Engine, cidrs []string) error {
	nets, err := parseProxies(cidrs)
	if err != nil {
		return err
	}
	if len(cidrs) == 0 {
		cidrs = nil // gin: nil trusts nobody (its default trusts everybody)
	}
	if err := e.SetTrustedProxies(cidrs); err != nil {
		return fmt.Errorf("api.TrustProxies: %w", err)
	}
	e.Use(func(c *gin.Context) {
		if len(nets) == 0 || !peerIn(c.Request.RemoteAddr, nets) {
			for _, h := range forwardedHeaders {
				delete(c.Request.Header, h)
			}
		}
		c.Next()
	})
	return nil
}

func parseProxies(cidrs []string) ([]netip.Prefix, error) {
	var nets []netip.Prefix
	for _, s := range cidrs {
		if p, err := netip.ParsePrefix(s); err == nil {
			nets = append(nets, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("api.TrustProxies: %q is neither a CIDR nor an IP address", s)
		}
		nets = append(nets, netip.PrefixFrom(a, a.BitLen()))
	}
	return nets, nil
}

// peerIn reports whether the TCP peer (host:port) is in nets.
func peerIn(remoteAddr string, nets []netip.Prefix) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
