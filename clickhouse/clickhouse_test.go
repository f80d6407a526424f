package clickhouse

import "testing"

func TestAllOrderedAndUnique(t *testing.T) {
	ss, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) == 0 || ss[0].Name != "schema_migrations" {
		t.Fatalf("first statement must create schema_migrations, got %+v", ss[:1])
	}
	for i := 1; i < len(ss); i++ {
		if ss[i].Version <= ss[i-1].Version {
			t.Errorf("%04d_%s not after %04d", ss[i].Version, ss[i].Name, ss[i-1].Version)
		}
	}
}
