package platform

import "testing"

// TestPageInfoNext: a next page is read only with a cursor to read it
// from; one announced without a cursor ends the loop instead of reading
// the first page again for ever.
func TestPageInfoNext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		page   pageInfo
		cursor string
		more   bool
	}{
		{pageInfo{HasNextPage: true, EndCursor: "c2"}, "c2", true},
		{pageInfo{HasNextPage: false, EndCursor: "c2"}, "c2", false},
		{pageInfo{HasNextPage: true}, "", false},
		{pageInfo{}, "", false},
	} {
		if cursor, more := tc.page.next(); cursor != tc.cursor || more != tc.more {
			t.Errorf("%+v.next() = %q, %v; want %q, %v", tc.page, cursor, more, tc.cursor, tc.more)
		}
	}
}
