// Decoding of the type-specific JSON (shared and each group's content) into
// the typed shapes, strictly: an unknown or mistyped field is a finding named
// by its JSON path.

package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// decodeInto decodes raw strictly into dst; an unusable value becomes an
// invalid_request finding at param.
func (v *validator) decodeInto(raw json.RawMessage, dst any, param string) bool {
	if isEmptyJSON(raw) {
		return true
	}
	if err := strictUnmarshal(raw, dst); err != nil {
		p, msg := jsonErrorParam(err)
		if fe, ok := errors.AsType[*fieldError](err); ok {
			msg = fe.message(joinParam(param, p)) // name the field by its whole path
		}
		v.fail("invalid_request", joinParam(param, p), "%s", msg)
		return false
	}
	return true
}

func (v *validator) decodeShared() {
	t := v.t
	bundled := map[Type]bool{}
	if t.Type == TypeCombined {
		for k := range t.Shared {
			kt := Type(k)
			if !bundleable(kt) {
				v.fail("invalid_request", "shared."+k, "A combined test cannot bundle %q.", k)
				continue
			}
			bundled[kt] = true
			if _, allowed := sharedRule(kt); !allowed && !isEmptyJSON(t.Shared[k]) {
				v.fail("invalid_request", "shared."+k,
					"A %s change carries no shared configuration: send shared.%s as {}.", kt, k)
			}
		}
		if len(bundled) < 2 {
			v.fail("invalid_request", "shared",
				"A combined test carries one shared key per bundled change type, at least two.")
		}
	} else {
		for k := range sortedKeys(t.Shared) {
			if Type(k) != t.Type {
				v.fail("invalid_request", "shared."+k, "A %s test carries only the shared key %q.", t.Type, t.Type)
			}
		}
		required, allowed := sharedRule(t.Type)
		_, has := t.Shared[string(t.Type)]
		if required && !has {
			v.fail("invalid_request", "shared."+string(t.Type), "A %s test needs shared.%s.", t.Type, t.Type)
		}
		if !allowed && has && !isEmptyJSON(t.Shared[string(t.Type)]) {
			v.fail("invalid_request", "shared."+string(t.Type), "A %s test carries no shared configuration.", t.Type)
		}
		bundled[t.Type] = true
	}
	for _, k := range Types {
		if !bundled[k] {
			continue
		}
		raw := t.Shared[string(k)]
		p := "shared." + string(k)
		switch k {
		case TypePrice:
			v.price = decodePart[PriceShared](v, raw, p)
		case TypeShipping:
			v.shipping = decodePart[ShippingShared](v, raw, p)
		case TypeTheme:
			v.theme = decodePart[ThemeShared](v, raw, p)
		case TypeTemplate:
			v.template = decodePart[TemplateShared](v, raw, p)
		case TypeURLRedirect:
			v.redirect = decodePart[URLRedirectShared](v, raw, p)
		case TypeVisualEditor:
			v.visual = decodePart[VisualEditorShared](v, raw, p)
		}
	}
}

func (v *validator) decodeGroups() {
	bundled := v.t.BundledTypes()
	for i, g := range v.t.Groups {
		base := fmt.Sprintf("test_groups[%d].content", i)
		gc := &v.groups[i]
		gc.prefix = map[Type]string{}
		parts := map[Type]json.RawMessage{}
		if v.t.Type == TypeCombined {
			var m map[string]json.RawMessage
			if !v.decodeInto(g.Content, &m, base) {
				continue
			}
			for k := range sortedKeys(m) {
				if !slices.Contains(bundled, Type(k)) {
					v.fail("invalid_request", base+"."+k, "%q is not a change type this test bundles (see shared).", k)
					continue
				}
				parts[Type(k)] = m[k]
			}
			for _, k := range bundled {
				gc.prefix[k] = base + "." + string(k)
			}
		} else {
			parts[v.t.Type] = g.Content
			gc.prefix[v.t.Type] = base
		}
		for _, k := range bundled {
			raw, ok := parts[k]
			if !ok {
				continue
			}
			p := gc.prefix[k]
			switch k {
			case TypePrice:
				gc.price = decodePart[PriceContent](v, raw, p)
			case TypeShipping:
				gc.shipping = decodePart[ShippingContent](v, raw, p)
			case TypeTheme:
				gc.theme = decodePart[ThemeContent](v, raw, p)
			case TypeTemplate:
				gc.template = decodePart[TemplateContent](v, raw, p)
			case TypeURLRedirect:
				gc.redirect = decodePart[URLRedirectContent](v, raw, p)
			case TypeOffer:
				gc.offer = decodePart[OfferContent](v, raw, p)
			case TypeVisualEditor:
				gc.visual = decodePart[VisualEditorContent](v, raw, p)
			}
		}
	}
}

func (v *validator) collectRefs() {
	r := &v.refs
	if v.price != nil {
		r.Products = append(r.Products, v.price.ProductIDs...)
		for _, m := range v.price.Markets {
			r.Markets = append(r.Markets, m.ID)
		}
	}
	if v.visual != nil {
		r.Products = append(r.Products, v.visual.ProductIDs...)
	}
	if v.shipping != nil {
		r.Zones = append(r.Zones, v.shipping.ZoneIDs...)
	}
	if v.template != nil && v.template.ThemeID != "" {
		r.Themes = append(r.Themes, v.template.ThemeID)
	}
	for _, gc := range v.groups {
		if gc.price != nil {
			for _, p := range gc.price.Prices {
				r.Variants = append(r.Variants, p.ProductVariantID)
			}
		}
		if gc.theme != nil && gc.theme.ThemeID != "" {
			r.Themes = append(r.Themes, gc.theme.ThemeID)
		}
		if gc.offer != nil {
			for _, o := range gc.offer.Offers {
				if c := o.Conditions; c != nil {
					r.Products = append(r.Products, c.ProductIDs...)
					r.Collections = append(r.Collections, c.CollectionIDs...)
					if o.Discount.Type == "fixed_amount" {
						r.ProductVariants = append(r.ProductVariants, c.ProductIDs...)
						r.CollectionFloors = append(r.CollectionFloors, c.CollectionIDs...)
					}
				}
				if o.Discount.Type == "fixed_amount" && onWholeOrder(o.Conditions) {
					r.Dearest = true
				}
			}
		}
	}
}

// DecodeBody decodes a request body that is valid JSON strictly into dst:
// a value the schema refuses (an unknown field, a value of the wrong kind)
// is 422 invalid_request with param the JSON path of the first one in
// document order ("date_range.foo", "breakdown[1]").
func DecodeBody(body []byte, dst any) error {
	if err := strictUnmarshal(body, dst); err != nil {
		p, msg := jsonErrorParam(err)
		if p == "" {
			msg = "The request body does not fit this request's schema."
		}
		return Refuse("invalid_request", p, "%s", msg)
	}
	return nil
}

func strictUnmarshal(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var syntax *json.SyntaxError
		if !errors.As(err, &syntax) {
			if fe := locate(raw, reflect.TypeOf(dst), ""); fe != nil {
				return fe
			}
		}
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

var unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

// jsonErrorParam turns a decoding error into a relative param and a message.
func jsonErrorParam(err error) (string, string) {
	if fe, ok := errors.AsType[*fieldError](err); ok {
		return fe.param, fe.message(fe.param)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field, fmt.Sprintf("%s must be a JSON %s, not %s.", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
		return m[1], fmt.Sprintf("Unknown field %q.", m[1])
	}
	return "", "The value is not usable: " + strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"), strings.HasPrefix(k, "float"):
		return "number"
	case k == "slice" || k == "array":
		return "array"
	case k == "struct" || k == "map" || k == "ptr":
		return "object"
	case k == "bool":
		return "boolean"
	}
	return k
}

func joinParam(base, rel string) string {
	switch {
	case rel == "":
		return base
	case base == "":
		return rel
	}
	return base + "." + rel
}

// decodePart decodes one type's part of a test (its shared configuration or
// a group's content) into a new T, findings under p.
func decodePart[T any](v *validator, raw json.RawMessage, p string) *T {
	x := new(T)
	v.decodeInto(raw, x, p)
	return x
}
