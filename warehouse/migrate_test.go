package warehouse

import "testing"

func TestRenderDDL(t *testing.T) {
	t.Parallel()
	const in = "CREATE TABLE IF NOT EXISTS {db}.events {on_cluster} (a UInt8) ENGINE = {engine:ReplacingMergeTree(ver)} ORDER BY a"
	cases := []struct{ name, cluster, want string }{
		{"single node", "", "CREATE TABLE IF NOT EXISTS `lift`.events  (a UInt8) ENGINE = ReplacingMergeTree(ver) ORDER BY a"},
		{"cluster", "main", "CREATE TABLE IF NOT EXISTS `lift`.events ON CLUSTER `main` (a UInt8) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lift.events', '{replica}', ver) ORDER BY a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := renderDDL(in, "lift", c.cluster); got != c.want {
				t.Errorf("renderDDL:\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestRenderForServer(t *testing.T) {
	t.Parallel()
	const create = "CREATE TABLE t (device {lowcard:String}, at DateTime {codec:Delta, ZSTD(1)}, p String {codec:ZSTD(3)})"
	const alter = "-- why\n{since:20.3}ALTER TABLE t MODIFY COLUMN device LowCardinality(String)"
	old, current := serverVersion{18, 16}, serverVersion{26, 7}
	cases := []struct {
		name     string
		sql      string
		server   serverVersion
		want     string
		wantSkip bool
	}{
		{"18.16 keeps today's types", create, old, "CREATE TABLE t (device String, at DateTime , p String )", false},
		{"current server", create, current,
			"CREATE TABLE t (device LowCardinality(String), at DateTime CODEC(Delta, ZSTD(1)), p String CODEC(ZSTD(3)))", false},
		{"first modern version", create, serverVersion{20, 3},
			"CREATE TABLE t (device LowCardinality(String), at DateTime CODEC(Delta, ZSTD(1)), p String CODEC(ZSTD(3)))", false},
		{"just before", create, serverVersion{20, 2}, "CREATE TABLE t (device String, at DateTime , p String )", false},
		{"gated step skipped on 18.16", alter, old, "", true},
		{"gated step on a current server", alter, current, "-- why\nALTER TABLE t MODIFY COLUMN device LowCardinality(String)", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, skip := renderForServer(c.sql, c.server)
			if got != c.want || skip != c.wantSkip {
				t.Errorf("renderForServer = %q, %v\nwant %q, %v", got, skip, c.want, c.wantSkip)
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]serverVersion{"18.16.1": {18, 16}, "26.7.2.1": {26, 7}, " 24.3.5.47 ": {24, 3}} {
		if got, err := parseVersion(in); err != nil || got != want {
			t.Errorf("parseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x.y", "26"} {
		if _, err := parseVersion(in); err == nil {
			t.Errorf("parseVersion(%q) = nil error", in)
		}
	}
}

func TestMutationTable(t *testing.T) {
	t.Parallel()
	for sql, want := range map[string]string{
		"-- c\nALTER TABLE `db`.orders  UPDATE revenue = 1 WHERE 1":                    "orders",
		"ALTER TABLE `db`.events ON CLUSTER `c` DELETE WHERE 1":                        "events",
		"ALTER TABLE `db`.orders  MODIFY COLUMN revenue Decimal(18, 4)":                "",
		"INSERT INTO `db`.orders (a) SELECT a FROM `db`.orders WHERE source = 'x'":     "",
		"-- ALTER TABLE `db`.x UPDATE in a comment\nCREATE TABLE IF NOT EXISTS `db`.x": "",
	} {
		if got, _ := mutationTable(sql); got != want {
			t.Errorf("mutationTable(%q) = %q, want %q", sql, got, want)
		}
	}
}
