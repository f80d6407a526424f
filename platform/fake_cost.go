package platform

import (
	"fmt"
	"strconv"
	"strings"
)

// The fake prices every query the way the platform's Admin API does before
// running it, and refuses one over maxQueryCost as the platform does
// (MAX_COST_EXCEEDED), so a query that only the fake would answer fails a
// test instead of a merchant's install. The platform's published rules
// (shopify.dev, "GraphQL Admin API rate limits", Cost calculation): a scalar
// or enum field costs 0, an object 1, a connection 2 plus first (or last)
// times what one of its nodes costs, and a mutation 10. Its worked example,
// products(first: 10) { edges { node { title variants(first: 5) { edges {
// node { price } } } } } }, costs 2 + 10 × (1 + 2 + 5 × 1) = 82.

// maxQueryCost is the platform's single-query limit, whatever the plan.
const maxQueryCost = 1000

// mutationCost is what the platform charges a mutation.
const mutationCost = 10

// oversizedInput is the size of the first array in vars longer than
// maxInputArray, or 0.
func oversizedInput(v any) int {
	switch x := v.(type) {
	case []any:
		if len(x) > maxInputArray {
			return len(x)
		}
		for _, e := range x {
			if n := oversizedInput(e); n > 0 {
				return n
			}
		}
	case map[string]any:
		for _, e := range x {
			if n := oversizedInput(e); n > 0 {
				return n
			}
		}
	}
	return 0
}

// queryCost is the requested cost of the GraphQL document's operation.
func queryCost(doc string, vars map[string]any) (int, error) {
	p := &gqlParser{toks: gqlTokens(doc), vars: vars}
	if p.peek() == "mutation" {
		return mutationCost, nil
	}
	if p.peek() == "query" {
		p.next()
		for p.peek() != "{" && p.peek() != "" {
			p.next() // name and variable definitions: free
		}
	}
	sel, err := p.selection()
	if err != nil {
		return 0, err
	}
	return sel.selectionCost(), nil
}

// gqlField is a selected field: its page size when it is a connection
// (first or last), and what it selects.
type gqlField struct {
	name     string
	page     int // 0: not a connection
	children []gqlField
}

func (f gqlField) cost() int {
	if f.page > 0 {
		total := 2
		for _, c := range f.children {
			switch c.name {
			case "nodes", "edges": // one per node
				total += f.page * c.nodeCost()
			default: // pageInfo and the like: once per connection
				total += c.cost()
			}
		}
		return total
	}
	if f.children == nil {
		return 0 // a scalar or an enum
	}
	return 1 + f.selectionCost()
}

// nodeCost is one node's cost under nodes { … } or edges { node { … } }.
func (f gqlField) nodeCost() int {
	if f.name == "nodes" {
		return f.cost()
	}
	n := 0
	for _, c := range f.children { // edges: node and cursor
		n += c.cost()
	}
	return n
}

func (f gqlField) selectionCost() int {
	n := 0
	for _, c := range f.children {
		n += c.cost()
	}
	return n
}

// gqlParser reads the parts of a GraphQL document that set its cost:
// selections, and the first and last arguments of connections.
type gqlParser struct {
	toks []string
	pos  int
	vars map[string]any
}

func (p *gqlParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *gqlParser) next() string {
	t := p.peek()
	p.pos++
	return t
}

// selection reads { field… } into a root field that costs what its
// fields cost.
func (p *gqlParser) selection() (gqlField, error) {
	if p.next() != "{" {
		return gqlField{}, fmt.Errorf("syntax error: a selection set must start with {")
	}
	root := gqlField{children: []gqlField{}}
	for p.peek() != "}" {
		if p.peek() == "" {
			return gqlField{}, fmt.Errorf("syntax error: unclosed selection set")
		}
		if p.peek() == "..." { // inline fragment: its fields count as the parent's
			p.next()
			if t := p.peek(); t != "on" && t != "{" && t != "@" {
				return gqlField{}, fmt.Errorf("the fake does not price the named fragment %s", t)
			}
			for p.peek() != "{" && p.peek() != "" {
				p.next()
			}
			inner, err := p.selection()
			if err != nil {
				return gqlField{}, err
			}
			root.children = append(root.children, inner.children...)
			continue
		}
		f, err := p.field()
		if err != nil {
			return gqlField{}, err
		}
		root.children = append(root.children, f)
	}
	p.next()
	return root, nil
}

func (p *gqlParser) field() (gqlField, error) {
	f := gqlField{name: p.next()}
	if p.peek() == ":" { // alias: name
		p.next()
		f.name = p.next()
	}
	if p.peek() == "(" {
		if err := p.arguments(&f); err != nil {
			return gqlField{}, err
		}
	}
	for p.peek() == "@" { // directives cost nothing
		p.next()
		p.next()
		if p.peek() == "(" {
			if err := p.arguments(&gqlField{}); err != nil {
				return gqlField{}, err
			}
		}
	}
	if p.peek() == "{" {
		sel, err := p.selection()
		if err != nil {
			return gqlField{}, err
		}
		f.children = sel.children
	}
	return f, nil
}

// arguments reads (name: value …), keeping first or last as the page size.
func (p *gqlParser) arguments(f *gqlField) error {
	p.next()
	for p.peek() != ")" {
		name := p.next()
		if name == "" || p.next() != ":" {
			return fmt.Errorf("syntax error in the arguments of %s", f.name)
		}
		start := p.pos
		if err := p.skipValue(); err != nil {
			return err
		}
		if (name == "first" || name == "last") && p.pos == start+1 {
			n, err := p.pageSize(p.toks[start])
			if err != nil {
				return fmt.Errorf("%s of %s: %w", name, f.name, err)
			}
			f.page = n
		}
	}
	p.next()
	return nil
}

func (p *gqlParser) pageSize(tok string) (int, error) {
	if v, ok := strings.CutPrefix(tok, "$"); ok {
		switch x := p.vars[v].(type) {
		case float64:
			return int(x), nil
		case int:
			return x, nil
		}
		return 0, fmt.Errorf("variable $%s is not a number", v)
	}
	return strconv.Atoi(tok)
}

// skipValue passes one argument value: a token, or a list or object.
func (p *gqlParser) skipValue() error {
	switch t := p.next(); t {
	case "":
		return fmt.Errorf("syntax error: unfinished value")
	case "[", "{":
		closer := map[string]string{"[": "]", "{": "}"}[t]
		for p.peek() != closer {
			if t == "{" {
				p.next() // field name
				p.next() // :
			}
			if err := p.skipValue(); err != nil {
				return err
			}
		}
		p.next()
	}
	return nil
}

// gqlTokens splits a GraphQL document into names, numbers, variables
// ($name as one token), strings (kept whole) and punctuators; commas and
// comments are insignificant, as the GraphQL grammar says.
func gqlTokens(doc string) []string {
	var toks []string
	for i := 0; i < len(doc); {
		c := doc[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			i++
		case c == '#':
			for i < len(doc) && doc[i] != '\n' {
				i++
			}
		case strings.HasPrefix(doc[i:], "..."):
			toks, i = append(toks, "..."), i+3
		case c == '"':
			j := stringEnd(doc, i)
			toks, i = append(toks, doc[i:j]), j
		case isNameByte(c) || c == '$' || c == '-':
			j := i + 1
			for j < len(doc) && isNameByte(doc[j]) {
				j++
			}
			toks, i = append(toks, doc[i:j]), j
		default:
			toks, i = append(toks, doc[i:i+1]), i+1
		}
	}
	return toks
}

// stringEnd is the index just past the string literal (or block string)
// starting at doc[i].
func stringEnd(doc string, i int) int {
	if strings.HasPrefix(doc[i:], `"""`) {
		if k := strings.Index(doc[i+3:], `"""`); k >= 0 {
			return i + 3 + k + 3
		}
		return len(doc)
	}
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(doc)
}

func isNameByte(c byte) bool {
	return c == '_' || c == '.' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}
