package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Warning codes THEMES_PUBLISH raises on tests (shown by results snapshots
// through the repository's test warnings).
const (
	// WarnThemeUnpublished: a template test's theme is no longer the
	// published one, so visitors no longer see either group's template.
	WarnThemeUnpublished = "theme_unpublished"
	// WarnPublishedThemeChanged: a theme test's control shows the published
	// theme, which changed while the test runs.
	WarnPublishedThemeChanged = "published_theme_changed"
)

// themePayload is THEMES_PUBLISH.
type themePayload struct {
	ID   json.RawMessage `json:"id"`
	Name string          `json:"name"`
	Role string          `json:"role"`
}

// themePublished records the published theme in the catalog mirror and
// flags the live theme and template tests it affects.
func (s *WebhookService) themePublished(ctx context.Context, shop *Shop, d *WebhookDelivery) (string, txEffect, error) {
	var p themePayload
	if err := decodeDelivery(d, &p); err != nil {
		return "", nil, err
	}
	var id platformID
	if err := json.Unmarshal(p.ID, &id); err != nil || id == "" {
		return "", nil, &unreadableBody{msg: "the theme has no id"}
	}
	if p.Role != "" && p.Role != "main" {
		return fmt.Sprintf("theme %s not published (role %s)", id, p.Role), nil, nil
	}
	gid := "gid://shopify/OnlineStoreTheme/" + string(id)
	var raw string
	if json.Unmarshal(p.ID, &raw) == nil && strings.HasPrefix(raw, "gid://") {
		gid = raw
	}
	live, err := s.Repo.FindLiveTests(ctx, shop.ID)
	if err != nil {
		return "", nil, err
	}
	block := ""
	if s.ThemeBlock != nil && len(live) > 0 {
		// Live tests render through the app block; the new theme needs it.
		if block, err = s.ThemeBlock(ctx, shop, gid); err != nil {
			return "", nil, err
		}
		block = "; " + block
	}
	effect := func(ctx context.Context, tx WebhookTx) error {
		if err := tx.PublishTheme(ctx, shop.ID, string(id), gid, p.Name); err != nil {
			return err
		}
		for _, t := range live {
			for _, w := range themeWarnings(t, string(id), p.Name) {
				if w.clear {
					if err := tx.ClearTestWarning(ctx, t.ID, w.Code); err != nil {
						return err
					}
					continue
				}
				if err := tx.SetTestWarning(ctx, shop.ID, t.ID, w.Finding); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return fmt.Sprintf("theme %s published; %d tests flagged%s", id, len(flaggedTests(live, string(id), p.Name)), block), effect, nil
}

// themeWarning is a warning to raise, or (clear) to lift.
type themeWarning struct {
	Finding
	clear bool
}

// themeWarnings says what publishing theme id does to test t:
//   - a template test (or the template part of a combined test) runs on one
//     theme; when another is published its templates are no longer live;
//     when its own theme is published again the warning is lifted;
//   - a theme test's control shows the published theme, so any publish
//     changes its baseline; if the new one is a variant's theme, control and
//     that variant now show the same theme.
func themeWarnings(t *Test, id, name string) []themeWarning {
	var out []themeWarning
	label := cmpName(name, id)
	if theme, ok := templateTheme(t); ok {
		if themeNumber(theme) == id {
			out = append(out, themeWarning{Finding: Finding{Code: WarnThemeUnpublished}, clear: true})
		} else {
			out = append(out, themeWarning{Finding: Finding{Severity: SeverityWarning, Code: WarnThemeUnpublished,
				Param:   "shared.template.theme_id",
				Message: fmt.Sprintf("Theme %s was published; this template test runs on theme %s, which visitors no longer see. End the test or publish its theme again.", label, theme)}})
		}
	}
	if variants := variantThemes(t); len(variants) > 0 {
		msg := fmt.Sprintf("Theme %s was published while this test runs, so its control group now shows it; results before and after the change are mixed.", label)
		for idx, theme := range variants {
			if themeNumber(theme) == id {
				msg = fmt.Sprintf("Theme %s was published; it is the theme of test group %d, so that group and the control now show the same theme.", label, idx)
				break
			}
		}
		out = append(out, themeWarning{Finding: Finding{Severity: SeverityWarning, Code: WarnPublishedThemeChanged, Message: msg}})
	}
	return out
}

// flaggedTests lists the tests that get a warning (for the outcome).
func flaggedTests(live []*Test, id, name string) []int64 {
	var out []int64
	for _, t := range live {
		for _, w := range themeWarnings(t, id, name) {
			if !w.clear {
				out = append(out, t.ID)
				break
			}
		}
	}
	return out
}

// templateTheme is the theme a template test (or a combined test's
// template part) runs on.
func templateTheme(t *Test) (string, bool) {
	raw, ok := t.Shared[string(TypeTemplate)]
	if !ok {
		return "", false
	}
	var s struct {
		ThemeID string `json:"theme_id"`
	}
	if json.Unmarshal(raw, &s) != nil || s.ThemeID == "" {
		return "", false
	}
	return s.ThemeID, true
}

// variantThemes maps group index to the theme it shows, for a theme test
// or a combined test with a theme part.
func variantThemes(t *Test) map[int]string {
	bundled := false
	for _, k := range t.BundledTypes() {
		bundled = bundled || k == TypeTheme
	}
	if !bundled {
		return nil
	}
	out := map[int]string{}
	for _, g := range t.Groups {
		var c struct {
			ThemeID string `json:"theme_id"`
			Theme   *struct {
				ThemeID string `json:"theme_id"`
			} `json:"theme"`
		}
		if json.Unmarshal(g.Content, &c) != nil {
			continue
		}
		if c.Theme != nil {
			c.ThemeID = c.Theme.ThemeID
		}
		if c.ThemeID != "" {
			out[g.Index] = c.ThemeID
		}
	}
	return out
}

func themeNumber(id string) string { return trailingDigits.FindString(id) }

func cmpName(name, id string) string {
	if name != "" {
		return fmt.Sprintf("%q", name)
	}
	return id
}
