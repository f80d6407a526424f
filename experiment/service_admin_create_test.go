package experiment_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/experimenttest"
)

// TestCreateFromAdminPanel: the admin panel creates checkout tests the
// public Create refuses, checks their groups and block settings, and
// cannot launch them; /v1's Get still answers 501.
func TestCreateFromAdminPanel(t *testing.T) {
	t.Parallel()
	clk := &experimenttest.Clock{}
	clk.Set(experimenttest.Epoch)
	repo := experimenttest.NewRepo(clk.Now)
	svc := experiment.NewService(experiment.ServiceConfig{Repository: repo, Now: clk.Now})
	shop, err := repo.AddShop(experiment.Shop{Domain: "checkout.example", Features: []string{"checkout_blocks"}, SubscriptionActive: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	groups := func(a, b int, content string) string {
		return `"test_groups":[{"index":0,"name":"Control","split":` + strconv.Itoa(a) + `},{"index":1,"name":"Badges","split":` + strconv.Itoa(b) + `,"content":` + content + `}]`
	}
	// 255 characters, 510 bytes: the limit counts characters, as every
	// type's does.
	good := `{"type":"checkout","name":"Badges ` + strings.Repeat("é", 248) + `",` + groups(50, 50, `{"blocks":[{"type":"trust_badge"}]}`) + `}`
	cases := []struct {
		name, body, code, param string
	}{
		{"ok", good, "", ""},
		{"no name", `{"type":"checkout","name":" ",` + groups(50, 50, `{}`) + `}`, "invalid_request", "name"},
		{"splits", `{"type":"checkout","name":"x",` + groups(50, 10, `{}`) + `}`, "split_sum_invalid", "test_groups"},
		{"one group", `{"type":"checkout","name":"x","test_groups":[{"index":0,"name":"A","split":100}]}`, "invalid_request", "test_groups"},
		{"content array", `{"type":"checkout","name":"x",` + groups(50, 50, `[1]`) + `}`, "invalid_request", "test_groups[1].content"},
		{"content too big", `{"type":"checkout","name":"x",` + groups(50, 50, bigBlocks()) + `}`, "invalid_request", "test_groups[1].content"},
		{"unknown field", `{"type":"checkout","name":"x","colour":1,` + groups(50, 50, `{}`) + `}`, "invalid_request", ""},
		// The rules every type follows (session audit 2, S2-11), and no
		// start date: a checkout test cannot launch (S2-9).
		{"same group names", `{"type":"checkout","name":"x","test_groups":[{"index":0,"name":"Same","split":50},{"index":1,"name":"same","split":50,"content":{}}]}`,
			"duplicate_group_name", "test_groups[1].name"},
		{"name of 256 characters", `{"type":"checkout","name":"` + strings.Repeat("é", 256) + `",` + groups(50, 50, `{}`) + `}`, "invalid_request", "name"},
		{"start date", `{"type":"checkout","name":"x","schedule":{"start_at":"2026-07-01T00:00:00Z"},` + groups(50, 50, `{}`) + `}`,
			"launch_unsupported", "schedule.start_at"},
	}
	for _, c := range cases {
		out, err := svc.CreateFromAdminPanel(ctx, shop, []byte(c.body))
		if c.code == "" {
			if err != nil || out.Test.ID == 0 || out.Test.Type != experiment.TypeCheckout || out.Test.Status != experiment.StatusDraft {
				t.Fatalf("%s: %v %+v", c.name, err, out)
			}
			continue
		}
		var e *experiment.Error
		if !errors.As(err, &e) || e.Code != c.code || (c.param != "" && e.Param != c.param) {
			t.Errorf("%s: got %v, want %s %s", c.name, err, c.code, c.param)
		}
	}
	tests, _, err := svc.List(ctx, shop, experiment.Filter{})
	if err != nil || len(tests) != 1 {
		t.Fatalf("stored %d tests (%v), want only the good one", len(tests), err)
	}
	id := tests[0].ID
	if _, err := svc.Create(ctx, shop, []byte(good), nil); !isCode(err, "not_implemented") {
		t.Errorf("public Create of checkout: %v", err)
	}
	if _, err := svc.Get(ctx, shop, id); !isCode(err, "not_implemented") {
		t.Errorf("public Get of checkout: %v", err)
	}
	if got, err := svc.GetFromAdminPanel(ctx, shop, id); err != nil || len(got.Groups) != 2 {
		t.Errorf("admin Get: %v %+v", err, got)
	}
	if _, err := svc.ChangeFromAdminPanel(ctx, shop, id, experiment.AdminChange{Action: experiment.ActionStart}); !isCode(err, "launch_unsupported") {
		t.Errorf("admin start of checkout: %v", err)
	}
	if got, err := svc.ChangeFromAdminPanel(ctx, shop, id, experiment.AdminChange{Body: []byte(`{"name":"Renamed"}`)}); err != nil || got.Test.Name != "Renamed" {
		t.Errorf("admin rename: %v", err)
	}
	if _, err := svc.ChangeFromAdminPanel(ctx, shop, id, experiment.AdminChange{Body: []byte(`{"schedule":{"start_at":"2026-07-01T00:00:00Z"}}`)}); !isCode(err, "launch_unsupported") {
		t.Errorf("admin update with a start date: %v", err)
	}
	if _, err := svc.ChangeFromAdminPanel(ctx, shop, id, experiment.AdminChange{Body: []byte(`{"test_groups":[{"index":0,"name":"A","split":90},{"index":1,"name":"B","split":20}]}`)}); !isCode(err, "split_sum_invalid") {
		t.Errorf("admin update with bad splits: %v", err)
	}
	if _, err := svc.Update(ctx, shop, id, []byte(`{"name":"v1"}`), nil); !isCode(err, "not_implemented") {
		t.Errorf("public Update of checkout: %v", err)
	}
	// Other actions go through the one state machine: a draft cannot end.
	if _, err := svc.ChangeFromAdminPanel(ctx, shop, id, experiment.AdminChange{Action: experiment.ActionEnd}); !isCode(err, "invalid_status_transition") {
		t.Errorf("admin end of a checkout draft: %v", err)
	}
}

func isCode(err error, code string) bool {
	var e *experiment.Error
	return errors.As(err, &e) && e.Code == code
}

// bigBlocks is block settings over the 16 KiB a group may hold, in short
// strings so only the group limit refuses them.
func bigBlocks() string {
	return `{"blocks":[` + strings.Repeat(`{"type":"trust_badge_aaaaaaaa"},`, 600) + `{}]}`
}
