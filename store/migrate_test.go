package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/migrations"
	"github.com/liftab/lift/store"
)

// Pending names what a database lacks of this binary's migrations: nothing
// at head, the one a newer binary brings, or all of them on a database
// never migrated (serve and worker refuse to start on any).
func TestPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := lifttest.PostgresURL(t)
	db, err := store.Open(ctx, store.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	last := all[len(all)-1]
	for _, step := range []struct {
		name, sql string
		want      int
	}{
		{"AtHead", "", 0},
		{"NewerBinary", "DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)", 1},
		{"NeverMigrated", "DROP TABLE schema_migrations", len(all)},
	} {
		if step.sql != "" {
			if _, err := conn.Exec(ctx, step.sql); err != nil {
				t.Fatal(err)
			}
		}
		got, err := db.Pending(ctx)
		if err != nil || len(got) != step.want {
			t.Fatalf("%s: %v (%v), want %d pending", step.name, got, err, step.want)
		}
		if step.want > 0 && !strings.HasSuffix(got[len(got)-1], "_"+last.Name) {
			t.Fatalf("%s: last pending %q, want %s", step.name, got[len(got)-1], last.Name)
		}
	}
}
