package lifttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// A stock Redis has databases 0–15. Database 0 holds the leases; 1–15 are
// handed to tests, one each at a time, across every test binary running
// against the server.
const (
	redisDatabases = 16
	leaseTTL       = 30 * time.Second // a crashed binary's leases free up after this
	leaseWait      = 5 * time.Minute  // give up when no database frees up for this long
)

// The lease is the key lifttest:lease:<db> set NX to a token of its holder
// with a TTL, refreshed while the test runs; the holder alone may refresh or
// drop it.
var (
	refreshLease = goredis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)
	releaseLease = goredis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
)

func leaseKey(db int) string { return "lifttest:lease:" + strconv.Itoa(db) }

// Redis returns the server address and a database number no other running
// test uses, waiting for one to free up when all are taken. The database is
// emptied now and when the test ends.
func Redis(t testing.TB) (addr string, db int) {
	t.Helper()
	addr = Stack(t).RedisAddr
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	token := Name("")
	db, err := lease(ctx, c, token)
	if err != nil {
		c.Close()
		t.Fatalf("lifttest: redis: %v", err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(leaseTTL / 6)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				refreshLease.Run(ctx, c, []string{leaseKey(db)}, token, leaseTTL.Milliseconds())
			}
		}
	})
	flush := func() {
		d := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
		defer d.Close()
		d.FlushDB(context.Background())
	}
	flush()
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		flush()
		releaseLease.Run(context.Background(), c, []string{leaseKey(db)}, token)
		c.Close()
	})
	return addr, db
}

// lease takes the first free database, starting the search at a random one
// so that binaries starting together do not all race for database 1.
func lease(ctx context.Context, c *goredis.Client, token string) (int, error) {
	deadline := time.Now().Add(leaseWait)
	for {
		start := rand.IntN(redisDatabases - 1)
		for i := range redisDatabases - 1 {
			db := 1 + (start+i)%(redisDatabases-1)
			ok, err := c.SetNX(ctx, leaseKey(db), token, leaseTTL).Result()
			if err != nil {
				return 0, err
			}
			if ok {
				return db, nil
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("databases 1–%d stayed leased for %v", redisDatabases-1, leaseWait)
		}
		time.Sleep(100*time.Millisecond + rand.N(200*time.Millisecond))
	}
}
