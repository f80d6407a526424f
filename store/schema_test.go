package store_test

import (
	"context"
	"testing"
)

// TestForeignKeysHaveIndexes: a foreign key whose parent rows the code
// deletes (a catalog import replaces products and zones, and their
// variants and rates go with them) needs an index leading with its
// columns, or each deleted parent scans the child table: replacing a
// 5,000-product mirror took 5.1 s of the write's 10 s without one.
// Shops and tests are never deleted (an uninstall or an end marks
// them), so keys to them are exempt.
func TestForeignKeysHaveIndexes(t *testing.T) {
	t.Parallel()
	pool, _ := testPool(t)
	rows, err := pool.Query(context.Background(), `
		SELECT c.conrelid::regclass::text || ' ' || c.conname
		FROM pg_constraint c
		WHERE c.contype = 'f' AND c.confrelid NOT IN ('shops'::regclass, 'experiments'::regclass)
		  AND NOT EXISTS (
			SELECT 1 FROM pg_index i
			WHERE i.indrelid = c.conrelid
			  AND (i.indkey::int2[])[0:array_length(c.conkey, 1) - 1] @> c.conkey
			  AND (i.indkey::int2[])[0:array_length(c.conkey, 1) - 1] <@ c.conkey)
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var fk string
		if err := rows.Scan(&fk); err != nil {
			t.Fatal(err)
		}
		t.Errorf("foreign key without an index leading with its columns: %s", fk)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
