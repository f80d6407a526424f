package session

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
)

// testRoutes mounts part 4.1 on g (behind the session token).
func (a *API) testRoutes(g gin.IRouter) {
	g.GET("/experiments", handle(a.list))
	g.GET("/experiments/:id", handle(a.get))
	g.PUT("/experiments/:id", handle(a.update))
	g.POST("/experiments/:id/pause", handle(a.action(experiment.ActionPause)))
	g.POST("/experiments/:id/resume", handle(a.action(experiment.ActionResume)))
	g.POST("/experiments/:id/duplicate", handle(a.duplicate))
	g.POST("/experiments/reset-analytics/:id", handle(a.resetAnalytics))
	g.PUT("/experiments/remove-products/:id", handle(a.removeProducts))
}

// listPage is how many tests one read of the repository returns while the
// list collects them all (the document's list has no pages).
const listPage = 100

// list answers every test of the shop, newest first by createdAt, ties by
// id descending (the repository's order).
func (a *API) list(c *gin.Context) error {
	shop := shopOf(c)
	out := []summaryWire{}
	f := experiment.Filter{Limit: listPage}
	for {
		page, more, err := a.Service.List(c.Request.Context(), shop, f)
		if err != nil {
			return err
		}
		for _, t := range page {
			out = append(out, summaryOf(t))
		}
		if !more || len(page) == 0 {
			break
		}
		last := page[len(page)-1]
		f.After = &experiment.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	data(c, out)
	return nil
}

func (a *API) get(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	shop := shopOf(c)
	t, err := a.Service.GetFromAdminPanel(c.Request.Context(), shop, id)
	if err != nil {
		return err
	}
	w, err := fullOf(c.Request.Context(), a.Service, shop, t)
	if err != nil {
		return err
	}
	if a.Warnings != nil {
		if w.Warnings, err = a.Warnings.FindTestWarnings(c.Request.Context(), shop.ID, t.ID); err != nil {
			return err
		}
	}
	data(c, w)
	return nil
}

// updateWire is the PUT body of 4.1; omitted fields are unaffected.
type updateWire struct {
	Name     *string                    `json:"name"`
	Status   *string                    `json:"status"`
	Settings map[string]json.RawMessage `json:"settings"`
}

// statusActions are the statuses PUT accepts and the lifecycle action that
// reaches each; ACTIVE starts a draft and resumes a paused test.
var statusActions = map[string]experiment.Action{
	"ACTIVE": experiment.ActionStart, "PAUSED": experiment.ActionPause, "STOPPED": experiment.ActionEnd,
}

// update merges name and settings through the same PATCH rules as /v1 and
// then moves the status through the same state machine. The transition is
// checked before anything is saved, so a refused status changes nothing.
func (a *API) update(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	var in updateWire
	if err := api.DecodeJSON(c, &in); err != nil {
		return err
	}
	patch := map[string]any{}
	if in.Name != nil {
		patch["name"] = *in.Name
	}
	if err := settingsPatch(in.Settings, patch, shopOf(c).Location()); err != nil {
		return err
	}
	ctx, shop := c.Request.Context(), shopOf(c)
	cur, err := a.Service.GetFromAdminPanel(ctx, shop, id)
	if err != nil {
		return err
	}
	var action experiment.Action
	if in.Status != nil {
		var ok bool
		if action, ok = statusActions[*in.Status]; !ok {
			return badRequest("status is ACTIVE, PAUSED or STOPPED; got %q.", *in.Status)
		}
		if action == experiment.ActionStart && cur.Status == experiment.StatusPaused {
			action = experiment.ActionResume
		}
		if _, err := experiment.PlanAction(cur, action); err != nil {
			return err
		}
	}
	var body []byte
	if len(patch) > 0 {
		if body, err = json.Marshal(patch); err != nil {
			return err
		}
	}
	if body != nil || action != "" {
		// One write: a refused action leaves the fields as they were.
		if _, err := a.Service.ChangeFromAdminPanel(ctx, shop, id, experiment.AdminChange{Body: body, Action: action}); err != nil {
			return err
		}
	}
	success(c)
	return nil
}

// settingsPatch maps part 2.2's settings onto the PATCH body: startDate and
// endDate onto schedule, targetingRules onto audience. Objects merge key by
// key, so settings merge into the existing ones. A date without a time is a
// day in loc, the shop's timezone.
func settingsPatch(s map[string]json.RawMessage, patch map[string]any, loc *time.Location) error {
	schedule := map[string]any{}
	for k, raw := range s {
		switch k {
		case "startDate", "endDate":
			v, err := dateSetting(k, raw, loc)
			if err != nil {
				return err
			}
			schedule[map[string]string{"startDate": "start_at", "endDate": "end_at"}[k]] = v
		case "targetingRules":
			var rules map[string]any
			if string(raw) != "null" && json.Unmarshal(raw, &rules) != nil {
				return badRequest("settings.targetingRules must be an object or null.")
			}
			patch["audience"] = rules
		case "analysis", "guardrails":
			// Passed through as v1's fields: the domain validates them.
			patch[k] = raw
		default:
			return badRequest("Unknown setting %q: settings take startDate, endDate, targetingRules, analysis and guardrails.", k)
		}
	}
	if len(schedule) > 0 {
		patch["schedule"] = schedule
	}
	return nil
}

// dateSetting is an ISO 8601 time or null (nil). A date alone is the whole
// day in loc: a startDate starts at its midnight, an endDate ends at the
// next one, so "endDate": "2027-01-31" runs through the 31st.
func dateSetting(k string, raw json.RawMessage, loc *time.Location) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, badRequest("settings.%s must be an ISO 8601 string or null.", k)
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		day, derr := time.ParseInLocation(time.DateOnly, s, loc)
		if derr != nil {
			return nil, badRequest("settings.%s must be an ISO 8601 date-time such as 2026-01-31T00:00:00Z or a date such as 2026-01-31; got %q.", k, s)
		}
		if t = day; k == "endDate" {
			t = day.AddDate(0, 0, 1)
		}
	}
	return t.UTC().Format(time.RFC3339Nano), nil
}

// action answers pause and resume. Part 3 names each one's condition ("test
// is running", "test is paused"), so unlike /v1's same-target actions a
// pause of a paused test is a 400, not a quiet success.
func (a *API) action(act experiment.Action) api.HandlerFunc {
	return func(c *gin.Context) error {
		id, err := api.TestID(c, "id")
		if err != nil {
			return err
		}
		ctx, shop := c.Request.Context(), shopOf(c)
		if _, err := a.Service.ChangeFromAdminPanel(ctx, shop, id, experiment.AdminChange{Action: act, Strict: true}); err != nil {
			return err
		}
		success(c)
		return nil
	}
}

func (a *API) duplicate(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	if _, err := a.Service.Duplicate(c.Request.Context(), shopOf(c), id, nil); err != nil {
		return err
	}
	success(c)
	return nil
}

func (a *API) resetAnalytics(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Service.ResetAnalytics(c.Request.Context(), shopOf(c), id); err != nil {
		return err
	}
	success(c)
	return nil
}

// removeProducts takes productIds (numeric strings) out of a test whose
// full test lists products (a price, price v2 or content test); ids the
// test does not have change nothing.
func (a *API) removeProducts(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	var in struct {
		ProductIDs []string `json:"productIds"`
	}
	if err := api.DecodeJSON(c, &in); err != nil {
		return err
	}
	ids := make([]string, len(in.ProductIDs))
	for i, p := range in.ProductIDs {
		if ids[i], err = gid("Product", p, "productIds"); err != nil {
			return err
		}
	}
	if _, err := a.Service.RemoveProducts(c.Request.Context(), shopOf(c), id, ids, nil); err != nil {
		if np, ok := errors.AsType[*experiment.NoProductsError](err); ok {
			// The domain names its own types; this surface knows them by
			// experimentType.
			return badRequest("A %s lists no products, so it has none to remove; a %s, %s or %s has.",
				typeName(np.Types), experimentTypes[experiment.TypePrice], experimentTypes[experiment.TypeOffer],
				experimentTypes[experiment.TypeVisualEditor])
		}
		return err
	}
	success(c)
	return nil
}
