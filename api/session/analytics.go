package session

import (
	"encoding/json"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/results"
)

// analyticsRoutes mounts part 4.3 on g (behind the session token). They
// share the /api/analytics prefix with the storefront's legacy POST
// /api/analytics/order: gin keeps that static path apart from the
// :experimentId parameter, and a test id is numeric, so neither shadows
// the other when both surfaces are mounted on one engine.
func (a *API) analyticsRoutes(g gin.IRouter) {
	views := map[string]results.View{
		"/analytics/:id": results.ViewProduct, "/analytics/v1/:id": results.ViewV1, "/analytics/v2/:id": results.ViewV2,
		"/analytics/v1/storewide/:id": results.ViewStorewideV1, "/analytics/v2/storewide/:id": results.ViewStorewideV2,
		"/analytics/shipping/:id": results.ViewShipping, "/analytics/redirect/:id": results.ViewRedirect,
		"/analytics/template/:id": results.ViewTemplate, "/analytics/theme/:id": results.ViewTheme,
		"/analytics/checkout/:id": results.ViewCheckout,
	}
	for path, view := range views {
		g.POST(path, handle(a.report(view)))
	}
	g.POST("/analytics/timeseries/:id", handle(a.timeseries))
}

// analyticsWire is part 2.3's body. Pointers tell an omitted field from a
// wrong one; the service validates the values.
type analyticsWire struct {
	DateStart    *string           `json:"dateStart"`
	DateFinish   *string           `json:"dateFinish"`
	FilterParams *filterParamsWire `json:"filterParams"`
	DeviceType   *string           `json:"deviceType"`
	VisitorType  *string           `json:"visitorType"`
}

type filterParamsWire struct {
	Countries  []string `json:"countries"`
	ProductIDs []string `json:"productIds"`
}

// timeseriesWire is the timeseries body of part 4.3.
type timeseriesWire struct {
	DateStart  *string         `json:"dateStart"`
	DateFinish *string         `json:"dateFinish"`
	TotalViews json.RawMessage `json:"totalViews"`
	Type       *string         `json:"type"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// choice is an optional enum field: omitted means its default, but sent it
// must name a value ("" is not one; the fuzz audit's Z5 saw it pass as
// omitted).
func choice(field string, s *string, values string) (string, error) {
	if s != nil && *s == "" {
		return "", badRequest("%s is empty: send %s, or leave it out.", field, values)
	}
	return deref(s), nil
}

// dates are the two required ends of a window: a missing one is the 400
// naming it.
func dates(start, finish *string) (string, string, error) {
	for _, d := range []struct {
		field string
		v     *string
	}{{"dateStart", start}, {"dateFinish", finish}} {
		if d.v == nil {
			return "", "", badRequest("%s is required: an ISO 8601 date such as 2026-06-01 or a date-time.", d.field)
		}
	}
	return *start, *finish, nil
}

func (a *API) report(view results.View) func(c *gin.Context) error {
	return func(c *gin.Context) error {
		id, err := api.TestID(c, "id")
		if err != nil {
			return err
		}
		var in analyticsWire
		if err := api.DecodeJSON(c, &in); err != nil {
			return err
		}
		from, to, err := dates(in.DateStart, in.DateFinish)
		if err != nil {
			return err
		}
		device, err := choice("deviceType", in.DeviceType, "ALL, DESKTOP, MOBILE or TABLET")
		if err != nil {
			return err
		}
		visitor, err := choice("visitorType", in.VisitorType, "ALL, VISITOR or CUSTOMER")
		if err != nil {
			return err
		}
		req := results.AnalyticsRequest{DateStart: from, DateFinish: to, DeviceType: device, VisitorType: visitor}
		if in.FilterParams != nil {
			req.Countries, req.ProductIDs = in.FilterParams.Countries, in.FilterParams.ProductIDs
		}
		body, err := a.Analytics.Report(c.Request.Context(), shopOf(c), id, view, req)
		if err != nil {
			return err
		}
		data(c, body) // the cached answer, already rendered
		return nil
	}
}

func (a *API) timeseries(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	var in timeseriesWire
	if err := api.DecodeJSON(c, &in); err != nil {
		return err
	}
	from, to, err := dates(in.DateStart, in.DateFinish)
	if err != nil {
		return err
	}
	typ, err := choice("type", in.Type, `"sales"`)
	if err != nil {
		return err
	}
	req := results.TimeseriesRequest{DateStart: from, DateFinish: to, Type: typ}
	if len(in.TotalViews) == 0 || string(in.TotalViews) == "null" {
		return badRequest("totalViews is required: an array of cumulative visitor counts, one per test group.")
	}
	var views []*int64 // a null count is not a count
	if json.Unmarshal(in.TotalViews, &views) != nil || slices.Contains(views, nil) {
		return badRequest("totalViews must be an array of whole visitor counts, one per test group.")
	}
	for _, v := range views {
		req.TotalViews = append(req.TotalViews, *v)
	}
	body, err := a.Analytics.Timeseries(c.Request.Context(), shopOf(c), id, req)
	if err != nil {
		return err
	}
	data(c, body) // the cached answer, already rendered
	return nil
}
