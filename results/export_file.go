package results

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/money"
)

// writeExport streams the test's orders from ClickHouse into a temporary file and
// renames it into place once complete, so a download never sees half a file.
func (s *Service) writeExport(ctx context.Context, x *Export) (int64, error) {
	t, err := s.cfg.Tests.FindTestByID(ctx, x.ShopID, x.ExperimentID)
	if err != nil {
		return 0, err
	}
	shop, err := s.cfg.Tests.FindShopByID(ctx, x.ShopID)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(s.cfg.ExportDir, 0o750); err != nil {
		return 0, fmt.Errorf("export dir: %w", err)
	}
	final := ExportFile(s.cfg.ExportDir, x.ID)
	f, err := os.CreateTemp(s.cfg.ExportDir, x.ID+".*.tmp")
	if err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	defer os.Remove(f.Name()) // after the rename this finds nothing
	defer f.Close()
	bw := bufio.NewWriterSize(f, 64<<10)
	w := csv.NewWriter(bw)
	if err := w.Write(ExportHeader); err != nil {
		return 0, err
	}
	rec := make([]string, len(ExportHeader))
	n, err := s.cfg.Warehouse.ExportOrders(ctx, x.ShopID, strconv.FormatInt(x.ExperimentID, 10), func(r *ExportRow) error {
		fillExportRecord(rec, r, t, shop.Currency)
		return w.Write(rec)
	})
	if err != nil {
		return 0, err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	if err := os.Rename(f.Name(), final); err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	return n, nil
}

// fillExportRecord renders r. A legacy order states no currency (the
// contract's body has none): its revenue is in the shop's. Amounts carry
// the currency's ISO 4217 minor units (JPY 1500, KWD 12.345), rounded
// half-even only here.
func fillExportRecord(rec []string, r *ExportRow, t *experiment.Test, shopCurrency string) {
	name := ""
	if g := t.Group(int(r.TestGroup)); g != nil {
		name = g.Name
	}
	currency := cmp.Or(r.Currency, shopCurrency)
	amount := func(d decimal.Decimal) string { return money.Format(d, currency) }
	rec[0] = r.OrderID
	rec[1] = r.CreatedAt.UTC().Format(time.RFC3339)
	rec[2] = strconv.Itoa(int(r.TestGroup))
	rec[3] = name
	rec[4] = r.VisitorID
	rec[5] = r.SessionID
	rec[6] = amount(r.Revenue)
	rec[7] = amount(r.Cost)
	rec[8] = amount(r.Revenue.Sub(r.Cost))
	rec[9] = currency
	rec[10] = strconv.FormatUint(r.LineItems, 10)
	rec[11] = strconv.FormatUint(r.Quantity, 10)
	rec[12] = strconv.FormatUint(r.Version, 10)
}
