package main

import (
	"context"

	"github.com/liftab/lift/api/storefront"
	"github.com/liftab/lift/store"
)

// analyticsMetadata serves the storefront's GET /api/ga4/metadata from the
// tests in Postgres: the shape belongs to the storefront surface, the data to
// the store, so the adapter lives where both are wired.
type analyticsMetadata struct{ db *store.DB }

func (m analyticsMetadata) FindAnalyticsMetadata(ctx context.Context, experimentID string, groupIndex int) (*storefront.AnalyticsMetadata, error) {
	g, err := m.db.FindGroupAnalytics(ctx, experimentID, groupIndex)
	if err != nil {
		return nil, err
	}
	return &storefront.AnalyticsMetadata{
		ExperimentID: g.ExperimentID, ExperimentName: g.ExperimentName, VariantID: g.GroupIndex,
		VariantName: g.GroupName, AnalyticsMeasurementID: g.MeasurementID,
	}, nil
}
