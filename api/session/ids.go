package session

import (
	"regexp"
	"strconv"
	"strings"
)

// The session document names platform objects by their number alone
// ("8101"); the domain keeps global ids (gid://shopify/Product/8101).

const gidPrefix = "gid://shopify/"

var number = regexp.MustCompile(`^[0-9]{1,19}$`)

// gid turns a numeric id of kind into a global id; a global id of that
// kind passes. Anything else is a 400 naming param.
func gid(kind, id, param string) (string, error) {
	if number.MatchString(id) {
		return gidPrefix + kind + "/" + id, nil
	}
	if rest, ok := strings.CutPrefix(id, gidPrefix+kind+"/"); ok && number.MatchString(rest) {
		return id, nil
	}
	return "", badRequest("%s must be a numeric %s id such as \"8101\"; got %q.", param, kind, id)
}

// numericID is the number at the end of a global id.
func numericID(g string) string {
	if i := strings.LastIndexByte(g, '/'); i >= 0 {
		return g[i+1:]
	}
	return g
}

func idString(id int64) string { return strconv.FormatInt(id, 10) }
