package session

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/experiment"
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

var idPattern = regexp.MustCompile(`^[1-9][0-9]{0,17}$`) // as ids are written: "01" is not test 1

// testID parses a test id from the path; one that cannot name a test reads
// as not found, like a test of another shop.
func testID(c *gin.Context, param string) (int64, error) {
	raw := c.Param(param)
	if !idPattern.MatchString(raw) {
		return 0, experiment.Errorf(experiment.KindNotFound, "experiment_not_found", "No test with id %q.", raw)
	}
	id, _ := strconv.ParseInt(raw, 10, 64)
	return id, nil
}
