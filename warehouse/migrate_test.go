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
