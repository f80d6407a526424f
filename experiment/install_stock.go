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
	sealed, err := s.Repo.FindAccessToken(ctx, shop.ID)
	if IsNotFound(err) {
		return "no platform token to copy stock with", nil
	}
	if err != nil {
		return "", fmt.Errorf("experiment.InstallService.SyncStock %d: %w", shop.ID, err)
	}
	tok, err := s.Sealer.Open(sealed)
	if err != nil {
		return "", fmt.Errorf("experiment.InstallService.SyncStock %d: stored token does not open: %w", shop.ID, err)
	}
	n, err := s.Platform.SyncDuplicateStock(ctx, shop.Domain, string(tok), l)
	if err != nil {
		return "", fmt.Errorf("experiment.InstallService.SyncStock %d: %w", shop.ID, err)
	}
	return fmt.Sprintf("stock copied to %d duplicate variants", n), nil
}

// ReinstallThemeBlock writes Lift's app block into a newly published theme
// (THEMES_PUBLISH, part 6.2: "re-installs or reactivates theme blocks where
// possible"), so live tests keep rendering on it. Without a stored token
// there is nothing Lift could write; a refused call is returned, so the
// delivery is retried.
func (s *InstallService) ReinstallThemeBlock(ctx context.Context, shop *Shop, themeID string) (string, error) {
	sealed, err := s.Repo.FindAccessToken(ctx, shop.ID)
	if IsNotFound(err) {
		return "no platform token to reinstall the theme block with", nil
	}
	if err != nil {
		return "", fmt.Errorf("experiment.InstallService.ReinstallThemeBlock %d: %w", shop.ID, err)
	}
	tok, err := s.Sealer.Open(sealed)
	if err != nil {
		return "", fmt.Errorf("experiment.InstallService.ReinstallThemeBlock %d: stored token does not open: %w", shop.ID, err)
	}
	if err := s.Platform.InstallThemeBlock(ctx, shop.Domain, string(tok), themeID); err != nil {
		return "", fmt.Errorf("experiment.InstallService.ReinstallThemeBlock %d: %w", shop.ID, err)
	}
	return "theme block reinstalled", nil
}
