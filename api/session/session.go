// Package session is the admin panel's surface at /api (session document
// seeds/001, parts 3, 4.1, 4.2, 4.5, 5 and 7): the platform's session token
// (an HS256 JWT), the tests and their per-type creation endpoints, and the
// internal admin tools. It is a second view over experiment.Service: every
// handler maps the document's wire shapes onto the service's use cases, so a
// test made here is the test /v1 shows, under the same rules.
package session

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
)

// Shops finds an installed shop by its domain; *store.DB implements it.
type Shops interface {
	// FindShopByDomain returns KindNotFound shop_not_found when absent.
	FindShopByDomain(ctx context.Context, domain string) (*experiment.Shop, error)
}

// ScriptEnabler turns a shop's storefront script on through the platform;
// experiment.InstallService implements it.
type ScriptEnabler interface {
	EnableScript(ctx context.Context, domain string) (*experiment.ScriptStatus, error)
}

// API holds what the session handlers need.
type API struct {
	Service *experiment.Service
	Shops   Shops
	// APIKey and APISecret are the app's platform credentials: a session
	// token names the key as its audience and is signed with the secret.
	// An empty secret refuses every session request.
	APIKey    string
	APISecret string
	// AdminKey guards the admin tools (x-api-key); empty answers 404.
	AdminKey string
	// Orders reads an order's attribution for POST /api/get-order; nil
	// leaves the route out.
	Orders experiment.OrderLookup
	// Scripts turns a shop's storefront script on for GET
	// /api/enable-script; nil leaves the route out.
	Scripts ScriptEnabler
	// Warnings, when set, adds a test's standing webhook warnings
	// (THEMES_PUBLISH) to GET /api/experiments/{id}.
	Warnings experiment.TestWarningReader
	// Analytics answers part 4.3's analytics; nil leaves those routes out.
	Analytics    *results.Analytics
	MaxBodyBytes int64
	Now          func() time.Time // default time.Now
}

// Mount adds the session routes under /api: every route answers errors in
// the session envelope, the tests behind the session token, the admin tools
// behind x-api-key.
func (a *API) Mount(r gin.IRouter) {
	if a.Now == nil {
		a.Now = time.Now
	}
	max := a.MaxBodyBytes
	if max <= 0 {
		max = api.DefaultMaxBody
	}
	g := r.Group("/api", api.UseSurface(api.SurfaceSession), api.LimitBody(max))
	s := g.Group("", a.authenticate())
	a.testRoutes(s)
	a.createRoutes(s)
	if a.Analytics != nil {
		a.analyticsRoutes(s)
	}
	a.adminRoutes(g.Group("", a.requireAdminKey()))
}

// handle adapts a handler whose errors are in the domain's vocabulary to
// the session surface, whose part 7 knows 400, 401, 404 and 500.
func handle(fn api.HandlerFunc) gin.HandlerFunc {
	return api.Handle(func(c *gin.Context) error { return sessionError(fn(c)) })
}

// sessionError re-kinds the domain's answers the session document has no
// status for: a refused state change (409) or plan entitlement (403) is a
// request the panel cannot make (400); a thing this service does not do
// (501) is a feature that is off (404). Validation findings (422) are
// already 400 on this surface; internal errors stay internal.
func sessionError(err error) error {
	e, ok := experiment.AsError(err)
	if !ok {
		return err
	}
	if e.Kind != experiment.KindInternal {
		c := *e
		c.Message = groupPrefix(e) + sessionWords(e.Message)
		e = &c
		err = e
	}
	switch e.Kind {
	case experiment.KindConflict, experiment.KindForbidden:
		msg := e.Message
		if cur, ok := e.Details["current_status"].(string); ok && e.Code == "invalid_status_transition" {
			// The domain words the status as /v1 does (ended, draft); this
			// surface says part 2.1's (STOPPED, DRAFT).
			msg = strings.Replace(msg, "status is "+cur+".", "status is "+statusOf(experiment.Status(cur))+".", 1)
		}
		param := e.Param
		if e.Code == "locked_field" {
			// The domain names v1's fields (schedule.start_at); the admin
			// panel sent its own (settings.startDate).
			param = sessionField(e.Param)
			msg = param + " cannot change after launch; only name, settings.endDate, settings.analysis and settings.guardrails " +
				"(and, through the public API, the groups' names and splits) can. Duplicate the test to change anything else."
		}
		return experiment.Errorf(experiment.KindInvalidRequest, e.Code, "%s", msg).WithParam(param)
	case experiment.KindNotImplemented:
		return experiment.Errorf(experiment.KindNotFound, e.Code, "%s", e.Message).WithParam(e.Param)
	}
	return err
}

// v1Words are the domain's names of fields (v1's) that this surface
// calls otherwise, as they appear in its messages.
var v1Words = strings.NewReplacer(
	"shared.price.product_ids", "products", "shared.visual_editor.product_ids", "products",
	"shared.template.theme_id", "themeId", "shared.shipping.zone_ids", "zoneIds",
	"shared.url_redirect.source_path", "sourcePath", "shared.url_redirect.match_type", "matchType",
	"schedule.start_at", "settings.startDate", "schedule.end_at", "settings.endDate",
	".content.theme_id", ".themeId", ".content.template", ".template", ".content.destination", ".destination",
	".content.custom_css", ".customCss", ".content.custom_js", ".customJs", ".content.rates", ".rates",
	".content.checkout", ".checkout", "].split", "].weight", "test_groups", "testGroups",
	".content.dom_changes", ".domChanges", "parent_selector", "parentSelector", "insert_before_selector", "insertBeforeSelector",
)

// groupOfParam is the test group a v1 field path lies in.
var groupOfParam = regexp.MustCompile(`^test_groups\[([0-9]+)\]`)

// groupPrefix names the test group a validation finding is about
// ("testGroups[2]: "), since this surface's envelope has no param and a
// message about an image URL or a selector does not say which group's it
// is; empty when the message names it already or the finding is not a
// group's.
func groupPrefix(e *experiment.Error) string {
	m := groupOfParam.FindStringSubmatch(e.Param)
	if e.Kind != experiment.KindValidation || m == nil {
		return ""
	}
	g := "testGroups[" + m[1] + "]"
	if strings.Contains(sessionWords(e.Message), g) || strings.Contains(e.Message, "group "+m[1]) {
		return ""
	}
	return g + ": "
}

// platformID is a platform global id; this surface's ids are its number.
var platformID = regexp.MustCompile(`gid://shopify/[A-Za-z]+/([0-9]+)`)

// sessionWords rewords a domain message for the admin panel: its field
// names and numeric ids, not v1's paths and global ids (session audit 2,
// S2-10), so the merchant finds the field the message names.
func sessionWords(msg string) string {
	return platformID.ReplaceAllString(v1Words.Replace(msg), "$1")
}

// sessionField is the session surface's name of a v1 field path.
func sessionField(v1 string) string {
	for prefix, field := range map[string]string{"schedule.start_at": "settings.startDate", "schedule.end_at": "settings.endDate",
		"audience": "settings.targetingRules", "test_groups": "testGroups", "analysis": "settings.analysis", "guardrails": "settings.guardrails"} {
		if rest, ok := strings.CutPrefix(v1, prefix); ok {
			return field + rest
		}
	}
	return v1
}

// success answers an action: the JSON string "success".
func success(c *gin.Context) {
	c.JSON(http.StatusOK, "success")
}

// data answers a read in the success envelope.
func data(c *gin.Context, v any) {
	c.JSON(http.StatusOK, gin.H{"status": "success", "data": v})
}

func badRequest(format string, args ...any) error {
	return experiment.Errorf(experiment.KindInvalidRequest, "invalid_request", format, args...)
}

const shopKey = "lift.session.shop"

// shopOf is the shop the session token named.
func shopOf(c *gin.Context) *experiment.Shop {
	s, _ := c.Get(shopKey)
	shop, _ := s.(*experiment.Shop)
	return shop
}
