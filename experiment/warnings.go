package experiment

import "context"

// TestWarningReader reads the warnings webhooks raised on a test and keep
// until lifted (THEMES_PUBLISH, webhook_themes.go), so both APIs' reads of
// a test show them; *store.DB implements it.
type TestWarningReader interface {
	// FindTestWarnings returns the test's standing warnings, oldest first;
	// none when it has none.
	FindTestWarnings(ctx context.Context, shopID, testID int64) ([]Finding, error)
}
