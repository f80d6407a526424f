// Package catalogdata ships the demo catalog that `lift seed` and `lift dev`
// load. It is written in the catalog import format of docs/tests-api.md, the
// same format `lift seed --catalog FILE.json` reads.
package catalogdata

import _ "embed"

// Demo is a small apparel shop: products with variants, prices and costs,
// collections, themes with templates, delivery zones with rates, markets.
//
//go:embed demo.json
var Demo []byte
