package devstack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type clickhouse struct{ l *layout }

func (c *clickhouse) name() string    { return "clickhouse" }
func (c *clickhouse) dir() string     { return filepath.Join(c.l.dir, "clickhouse") }
func (c *clickhouse) pidFile() string { return filepath.Join(c.dir(), "clickhouse.pid") }

func (c *clickhouse) binaries() ([]string, []string) {
	if lookPath("clickhouse-server", "/usr/sbin", "/usr/bin") == "" {
		return []string{"clickhouse-server"}, []string{"clickhouse-server", "clickhouse-client"}
	}
	return nil, nil
}

func (c *clickhouse) ready(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/ping", ClickHouseHTTPPort), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK && strings.HasPrefix(string(b), "Ok")
}

// configXML is the smallest server configuration 18.16 and current versions
// both accept (`<yandex>` is still read by current servers).
const configXML = `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>{{dir}}/log/clickhouse.log</log>
    <errorlog>{{dir}}/log/clickhouse.err.log</errorlog>
    <size>50M</size>
    <count>2</count>
  </logger>
  <http_port>{{http}}</http_port>
  <tcp_port>{{tcp}}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>{{dir}}/data/</path>
  <tmp_path>{{dir}}/tmp/</tmp_path>
  <user_files_path>{{dir}}/user_files/</user_files_path>
  <users_config>{{dir}}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <max_concurrent_queries>200</max_concurrent_queries>
  <mark_cache_size>536870912</mark_cache_size>
</yandex>
`

func (c *clickhouse) start(ctx context.Context) error {
	for _, d := range []string{"log", "data", "tmp", "user_files"} {
		if err := os.MkdirAll(filepath.Join(c.dir(), d), 0o755); err != nil {
			return err
		}
	}
	users, err := os.ReadFile("/etc/clickhouse-server/users.xml")
	if err != nil {
		return fmt.Errorf("read the packaged users.xml: %w", err)
	}
	if err := os.WriteFile(filepath.Join(c.dir(), "users.xml"), users, 0o644); err != nil {
		return err
	}
	cfg := strings.NewReplacer("{{dir}}", c.dir(), "{{http}}", fmt.Sprint(ClickHouseHTTPPort), "{{tcp}}", fmt.Sprint(ClickHouseTCPPort)).Replace(configXML)
	cfgPath := filepath.Join(c.dir(), "config.xml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	os.Remove(c.pidFile())
	return runLogged(ctx, filepath.Join(c.dir(), "log", "start.log"), lookPath("clickhouse-server", "/usr/sbin", "/usr/bin"),
		"--config-file="+cfgPath, "--pid-file="+c.pidFile(), "--daemon")
}

func (c *clickhouse) stop(ctx context.Context) (bool, error) {
	return killPidFile(ctx, c.pidFile(), "clickhouse")
}
