package warehouse_test

import (
	"slices"
	"testing"

	"github.com/liftab/lift/results"
	"github.com/liftab/lift/warehouse"
)

// TestAddActivity: the parts of StorewideActivity hold disjoint visitors,
// so a group's counts are the sum of its rows across parts, whichever part
// has it, and a group no part saw has no row.
func TestAddActivity(t *testing.T) {
	t.Parallel()
	row := func(g int, n int64) results.ActivityRow {
		return results.ActivityRow{TestGroup: g, ProductViewers: n, ProductViews: 2 * n, CartAdders: 3 * n, AddToCarts: 4 * n,
			CheckoutStarter: 5 * n, CheckoutStarts: 6 * n, StartersOrdered: 7 * n}
	}
	tests := []struct {
		name  string
		parts [][]results.ActivityRow
		want  []results.ActivityRow
	}{
		{"both parts", [][]results.ActivityRow{{row(0, 1), row(1, 10)}, {row(1, 100), row(0, 1000)}}, []results.ActivityRow{row(0, 1001), row(1, 110)}},
		{"a group in one part", [][]results.ActivityRow{{row(2, 3)}, {row(0, 4)}}, []results.ActivityRow{row(0, 4), row(2, 3)}},
		{"nothing", [][]results.ActivityRow{nil, nil}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := warehouse.AddActivity(tc.parts); !slices.Equal(got, tc.want) {
				t.Errorf("AddActivity = %+v, want %+v", got, tc.want)
			}
		})
	}
}
