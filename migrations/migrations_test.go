package migrations

import "testing"

func TestAllOrderedAndUnique(t *testing.T) {
	ms, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].Version <= ms[i-1].Version {
			t.Errorf("migration %d (%s) not after %d", ms[i].Version, ms[i].Name, ms[i-1].Version)
		}
	}
}
