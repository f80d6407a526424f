package experiment

import (
	"context"
	"errors"
	"fmt"
)

// ScriptStatus is the storefront script of a shop once enabled.
type ScriptStatus struct {
	Shop        *Shop
	ScriptTagID string
	Src         string
}

// EnableScript turns the storefront tracking script on for the shop (the
// admin tool GET /api/enable-script, session document part 4.5), with the
// shop's own platform token: a merchant whose script tag went missing gets
// it back without reinstalling. Enabling twice leaves one tag. Returns
// KindNotFound shop_not_found for an unknown shop, KindInvalidRequest
// shop_not_installed for a shop uninstalled or without a stored token,
// KindUnavailable platform_unavailable when the platform refused.
func (s *InstallService) EnableScript(ctx context.Context, domain string) (*ScriptStatus, error) {
	domain = NormalizeShopDomain(domain)
	if !plausibleShopDomain(domain) {
		return nil, Errorf(KindInvalidRequest, "invalid_shop", "The shop parameter must be the shop's domain, e.g. example.myshopify.com.")
	}
	if s.ScriptURL == "" {
		return nil, Errorf(KindNotImplemented, "script_not_configured", "No storefront script URL is configured.")
	}
	shop, err := s.Repo.FindShopByDomain(ctx, domain)
	if err != nil {
		return nil, err
	}
	notInstalled := Errorf(KindInvalidRequest, "shop_not_installed", "The shop has not installed the app; install it first.")
	if !shop.Installed() {
		return nil, notInstalled
	}
	sealed, err := s.Repo.FindAccessToken(ctx, shop.ID)
	if IsNotFound(err) {
		return nil, notInstalled
	}
	if err != nil {
		return nil, fmt.Errorf("experiment.InstallService.EnableScript %d: %w", shop.ID, err)
	}
	tok, err := s.Sealer.Open(sealed)
	if err != nil {
		return nil, fmt.Errorf("experiment.InstallService.EnableScript %d: stored token does not open: %w", shop.ID, err)
	}
	id, err := s.Platform.EnableScript(ctx, shop.Domain, string(tok), s.ScriptURL)
	if err != nil {
		var pe *PlatformError
		if errors.As(err, &pe) {
			return nil, &Error{Kind: KindUnavailable, Code: "platform_unavailable",
				Message: "The platform refused to enable the storefront script; try again.", Details: map[string]any{"status": pe.Status}}
		}
		return nil, fmt.Errorf("experiment.InstallService.EnableScript %d: %w", shop.ID, err)
	}
	return &ScriptStatus{Shop: shop, ScriptTagID: id, Src: s.ScriptURL}, nil
}
