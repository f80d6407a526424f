package warehouse

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// serverVersion is the connected ClickHouse's version, read with SELECT
// version() when Migrate starts: the DDL takes the column types and codecs
// the server supports (package clickhouse, "by version").
type serverVersion struct{ major, minor int }

// modernSince is the first version given LowCardinality columns and column
// codecs: 20.3, the first LTS release where both are stable and on by
// default (18.16, the Debian package, treats LowCardinality as experimental
// and has no codecs). Every release users run today is far above it.
var modernSince = serverVersion{20, 3}

func (v serverVersion) atLeast(o serverVersion) bool {
	return v.major > o.major || v.major == o.major && v.minor >= o.minor
}

func (v serverVersion) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }

// parseVersion reads "26.7.2.1" or "18.16.1"; anything else is an error.
func parseVersion(s string) (serverVersion, error) {
	parts := strings.SplitN(strings.TrimSpace(s), ".", 3)
	if len(parts) < 2 {
		return serverVersion{}, fmt.Errorf("server version %q", s)
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return serverVersion{}, fmt.Errorf("server version %q", s)
	}
	return serverVersion{major, minor}, nil
}

func readServerVersion(ctx context.Context, conn driver.Conn) (serverVersion, error) {
	var s string
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&s); err != nil {
		return serverVersion{}, fmt.Errorf("warehouse.Migrate: server version: %w", err)
	}
	return parseVersion(s)
}

var (
	lowcardRe = regexp.MustCompile(`\{lowcard:(\w+)\}`)
	codecRe   = regexp.MustCompile(`\{codec:([^{}]+)\}`)
	sinceRe   = regexp.MustCompile(`\{since:(\d+\.\d+)\}`)
)

// renderForServer fills in the version placeholders of package clickhouse:
// {lowcard:T} is LowCardinality(T) on a modern server and T before;
// {codec:…} is CODEC(…) on a modern server and nothing before. A statement
// marked {since:X.Y} applies only from that version on: skip reports an
// older server, and Migrate then leaves it unrecorded, so that it runs once
// the server is upgraded.
func renderForServer(sql string, v serverVersion) (out string, skip bool) {
	if m := sinceRe.FindStringSubmatch(sql); m != nil {
		need, err := parseVersion(m[1])
		if err != nil || !v.atLeast(need) {
			return "", true
		}
		sql = sinceRe.ReplaceAllString(sql, "")
	}
	modern := v.atLeast(modernSince)
	sql = lowcardRe.ReplaceAllStringFunc(sql, func(s string) string {
		t := lowcardRe.FindStringSubmatch(s)[1]
		if modern {
			return "LowCardinality(" + t + ")"
		}
		return t
	})
	sql = codecRe.ReplaceAllStringFunc(sql, func(s string) string {
		if modern {
			return "CODEC(" + strings.TrimSpace(codecRe.FindStringSubmatch(s)[1]) + ")"
		}
		return ""
	})
	return sql, false
}
