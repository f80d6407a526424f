package storefront

import "errors"

// errBodyTooLarge is readLimited's refusal of a body over the limit.
var errBodyTooLarge = errors.New("body too large")
