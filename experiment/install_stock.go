package experiment

import (
	"context"
	"fmt"
)

// SyncStock copies an inventory level of an original variant to the
// duplicates price tests made of it (INVENTORY_LEVELS_UPDATE, part 6.2),
// with the shop's own platform token. A shop without a stored token (never
// installed through the platform, or uninstalled) has nothing Lift could
// set. A refused platform call is returned, so the delivery is retried.
func (s *InstallService) SyncStock(ctx context.Context, shop *Shop, l InventoryLevel) (string, error) {
	tok, ok, err := s.platformToken(ctx, shop)
	if err != nil || !ok {
		return "no platform token to copy stock with", wrapInstall("SyncStock", shop, err)
	}
	n, err := s.Platform.SyncDuplicateStock(ctx, shop.Domain, tok, l)
	if err != nil {
		return "", wrapInstall("SyncStock", shop, err)
	}
	return fmt.Sprintf("stock copied to %d duplicate variants", n), nil
}

// ReinstallThemeBlock writes Lift's app block into a newly published theme
// (THEMES_PUBLISH, part 6.2: "re-installs or reactivates theme blocks where
// possible"), so live tests keep rendering on it. Without a stored token
// there is nothing Lift could write; a refused call is returned, so the
// delivery is retried.
func (s *InstallService) ReinstallThemeBlock(ctx context.Context, shop *Shop, themeID string) (string, error) {
	tok, ok, err := s.platformToken(ctx, shop)
	if err != nil || !ok {
		return "no platform token to reinstall the theme block with", wrapInstall("ReinstallThemeBlock", shop, err)
	}
	if err := s.Platform.InstallThemeBlock(ctx, shop.Domain, tok, themeID); err != nil {
		return "", wrapInstall("ReinstallThemeBlock", shop, err)
	}
	return "theme block reinstalled", nil
}

// platformToken opens the shop's stored platform token; ok is false when
// there is none (never installed through the platform, or uninstalled).
func (s *InstallService) platformToken(ctx context.Context, shop *Shop) (string, bool, error) {
	sealed, err := s.Repo.FindAccessToken(ctx, shop.ID)
	if IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	tok, err := s.Sealer.Open(sealed)
	if err != nil {
		return "", false, fmt.Errorf("stored token does not open: %w", err)
	}
	return string(tok), true, nil
}

// wrapInstall names the use case and shop in err (nil stays nil).
func wrapInstall(op string, shop *Shop, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("experiment.InstallService.%s %d: %w", op, shop.ID, err)
}
