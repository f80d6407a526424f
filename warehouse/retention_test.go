package warehouse

import (
	"testing"
	"time"
)

func TestRetentionStatement(t *testing.T) {
	t.Parallel()
	const plain = "CREATE TABLE lift.events (`created_at` DateTime) ENGINE = ReplacingMergeTree ORDER BY shop_id SETTINGS index_granularity = 8192"
	const at30 = "CREATE TABLE lift.events (`created_at` DateTime) ENGINE = ReplacingMergeTree ORDER BY shop_id TTL created_at + toIntervalDay(30) SETTINGS index_granularity = 8192"
	current, early := serverVersion{26, 7}, serverVersion{20, 8}
	day := 24 * time.Hour
	cases := []struct {
		name    string
		v       serverVersion
		cluster string
		keep    time.Duration
		create  string
		want    string
	}{
		{"set", current, "", 30 * day, plain, "ALTER TABLE `lift`.`events` MODIFY TTL created_at + INTERVAL 30 DAY"},
		{"already there", current, "", 30 * day, at30, ""},
		{"changed", current, "", 90 * day, at30, "ALTER TABLE `lift`.`events` MODIFY TTL created_at + INTERVAL 90 DAY"},
		{"rounded up to whole days", current, "", 36 * time.Hour, plain, "ALTER TABLE `lift`.`events` MODIFY TTL created_at + INTERVAL 2 DAY"},
		{"cluster", current, "main", 30 * day, plain, "ALTER TABLE `lift`.`events` ON CLUSTER `main` MODIFY TTL created_at + INTERVAL 30 DAY"},
		{"off, none set", current, "", 0, plain, ""},
		{"off removes", current, "", 0, at30, "ALTER TABLE `lift`.`events` REMOVE TTL"},
		{"off before REMOVE TTL existed", early, "", 0, at30, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := retentionStatement(c.v, "lift", c.cluster, "events", "created_at", c.keep, c.create); got != c.want {
				t.Errorf("retentionStatement = %q\nwant %q", got, c.want)
			}
		})
	}
}
