package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/liftab/lift/experiment"
)

// GroupAnalytics is what the storefront sends to the shop's analytics vendor
// about the group a visitor sees.
type GroupAnalytics struct {
	ExperimentID   string
	ExperimentName string
	GroupIndex     int
	GroupName      string
	MeasurementID  string
}

// FindGroupAnalytics returns the names of a test and one of its groups with
// the shop's analytics measurement id. Returns KindNotFound
// analytics_metadata_not_found when the test or group does not exist, the
// test is archived, or the shop has no measurement id (the feature is off).
func (db *DB) FindGroupAnalytics(ctx context.Context, experimentID string, groupIndex int) (*GroupAnalytics, error) {
	id, err := strconv.ParseInt(experimentID, 10, 64)
	if err != nil || id <= 0 {
		return nil, experiment.Errorf(experiment.KindNotFound, "analytics_metadata_not_found", "no test %q", experimentID)
	}
	g := GroupAnalytics{ExperimentID: experimentID, GroupIndex: groupIndex}
	err = db.pool.QueryRow(ctx, `SELECT e.name, g.name, s.analytics_measurement_id
		FROM experiments e JOIN test_groups g ON g.experiment_id = e.id JOIN shops s ON s.id = e.shop_id
		WHERE e.id = $1 AND g.idx = $2 AND e.status <> 'archived' AND s.analytics_measurement_id <> ''
		AND s.uninstalled_at IS NULL`, id, groupIndex).Scan(&g.ExperimentName, &g.GroupName, &g.MeasurementID)
	if err != nil {
		return nil, fmt.Errorf("store.FindGroupAnalytics %s/%d: %w", experimentID, groupIndex,
			notFound(err, "analytics_metadata_not_found", "no analytics metadata for test %s group %d", experimentID, groupIndex))
	}
	return &g, nil
}
