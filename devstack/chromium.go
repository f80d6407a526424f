package devstack

// Chromium is not a server: the browser tests (cmd/lift) start their own
// headless instance. The stack only makes sure Debian's package is there,
// the way it installs the servers, so `make test` runs those tests on a
// fresh machine instead of skipping them.

// chromiumBinaries are the names Debian and others install Chromium under.
var chromiumBinaries = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// ChromiumPath is the installed Chromium (LIFT_CHROMIUM's value when the
// caller passes it as override), or "" when there is none.
func ChromiumPath(override string) string {
	if override != "" {
		return lookPath(override)
	}
	for _, name := range chromiumBinaries {
		if p := lookPath(name, "/usr/bin", "/usr/lib/chromium"); p != "" {
			return p
		}
	}
	return ""
}

// chromiumPackage is the install-only "service" of Options.Browser.
type chromiumPackage struct{}

func (chromiumPackage) name() string { return "chromium" }

func (chromiumPackage) binaries() ([]string, []string) {
	if ChromiumPath("") == "" {
		return []string{"chromium"}, []string{"chromium"}
	}
	return nil, nil
}
