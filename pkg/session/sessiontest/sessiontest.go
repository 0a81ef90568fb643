// Package sessiontest is the conformance suite for session.Store
// implementations:
//
//	sessiontest.Run(t, func(t *testing.T, now func() time.Time) session.Store {
//		s := session.NewMemory()
//		s.Now = now
//		return s
//	})
//
// newStore must return an empty store (or one whose other sessions do not
// matter) that reads time from now, so expiry is tested without sleeping.
// The clock moves in whole minutes; stores may keep expiry with one-second
// precision.
package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/session"
)

// Clock is a manual clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Run runs the suite.
func Run(t *testing.T, newStore func(t *testing.T, now func() time.Time) session.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s session.Store, c *Clock)
	}{
		{"CreateExists", testCreateExists},
		{"AddToolsUnion", testAddToolsUnion},
		{"Expiry", testExpiry},
		{"AddToolsRefreshesTTL", testRefresh},
		{"DeleteDoesNotRevive", testDelete},
		{"CreateTwice", testCreateTwice},
		{"BadInput", testBadInput},
		{"ConcurrentAddTools", testConcurrent},
		{"ManyTools", testManyTools},
		{"Owner", testOwner},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Whole seconds, so stores with one-second precision agree.
			c := &Clock{t: time.Now().Truncate(time.Second)}
			tt.fn(t, newStore(t, c.Now), c)
		})
	}
}

var ctx = context.Background()

func uid(t *testing.T, name string) string {
	return fmt.Sprintf("mcp-session-%s-%s-%d", t.Name(), name, time.Now().UnixNano())
}

func exists(t *testing.T, s session.Store, id string) bool {
	t.Helper()
	ok, err := s.Exists(ctx, id)
	if err != nil {
		t.Fatalf("Exists(%s): %v", id, err)
	}
	return ok
}

func tools(t *testing.T, s session.Store, id string) []string {
	t.Helper()
	got, err := s.Tools(ctx, id)
	if err != nil {
		t.Fatalf("Tools(%s): %v", id, err)
	}
	if !sort.StringsAreSorted(got) {
		t.Fatalf("Tools(%s) not sorted: %v", id, got)
	}
	return got
}

func mustCreate(t *testing.T, s session.Store, id string, ttl time.Duration) {
	t.Helper()
	if err := s.Create(ctx, id, "key:owner", ttl); err != nil {
		t.Fatalf("Create(%s): %v", id, err)
	}
}

func mustAdd(t *testing.T, s session.Store, id string, ids ...string) {
	t.Helper()
	if err := s.AddTools(ctx, id, ids); err != nil {
		t.Fatalf("AddTools(%s, %v): %v", id, ids, err)
	}
}

func testCreateExists(t *testing.T, s session.Store, _ *Clock) {
	a, b := uid(t, "a"), uid(t, "b")
	if exists(t, s, a) {
		t.Fatal("session exists before Create")
	}
	if got := tools(t, s, a); len(got) != 0 {
		t.Fatalf("unknown session has tools %v", got)
	}
	mustCreate(t, s, a, time.Hour)
	if !exists(t, s, a) {
		t.Fatal("session missing after Create")
	}
	if exists(t, s, b) {
		t.Fatal("another id exists")
	}
	if got := tools(t, s, a); len(got) != 0 {
		t.Fatalf("new session has tools %v", got)
	}
}

func testAddToolsUnion(t *testing.T, s session.Store, _ *Clock) {
	a, b := uid(t, "a"), uid(t, "b")
	mustCreate(t, s, a, time.Hour)
	mustCreate(t, s, b, time.Hour)
	mustAdd(t, s, a, "srv__b", "srv__a", "srv__a")
	mustAdd(t, s, a, "srv__c", "srv__a")
	mustAdd(t, s, a)
	mustAdd(t, s, b, "other__x")
	if got, want := tools(t, s, a), []string{"srv__a", "srv__b", "srv__c"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Tools(a) = %v, want %v", got, want)
	}
	if got, want := tools(t, s, b), []string{"other__x"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Tools(b) = %v, want %v", got, want)
	}
}

func testExpiry(t *testing.T, s session.Store, c *Clock) {
	a := uid(t, "a")
	mustCreate(t, s, a, 10*time.Minute)
	mustAdd(t, s, a, "x__y")
	c.Advance(9 * time.Minute)
	if !exists(t, s, a) {
		t.Fatal("expired early")
	}
	c.Advance(2 * time.Minute)
	if exists(t, s, a) {
		t.Fatal("session still live after its ttl")
	}
	if got := tools(t, s, a); len(got) != 0 {
		t.Fatalf("expired session has tools %v", got)
	}
	if err := s.AddTools(ctx, a, []string{"x__z"}); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("AddTools on expired session: err = %v, want ErrNotFound", err)
	}
	if exists(t, s, a) {
		t.Fatal("AddTools revived an expired session")
	}
}

func testRefresh(t *testing.T, s session.Store, c *Clock) {
	a := uid(t, "a")
	mustCreate(t, s, a, 10*time.Minute)
	c.Advance(8 * time.Minute)
	mustAdd(t, s, a, "x__y")
	c.Advance(8 * time.Minute) // 16 min: alive only because of the refresh at 8
	if !exists(t, s, a) {
		t.Fatal("AddTools did not refresh the ttl")
	}
	mustAdd(t, s, a) // an empty add refreshes too
	c.Advance(9 * time.Minute)
	if !exists(t, s, a) {
		t.Fatal("empty AddTools did not refresh the ttl")
	}
	c.Advance(2 * time.Minute)
	if exists(t, s, a) {
		t.Fatal("session outlived its refreshed ttl")
	}
}

func testDelete(t *testing.T, s session.Store, _ *Clock) {
	a := uid(t, "a")
	mustCreate(t, s, a, time.Hour)
	mustAdd(t, s, a, "x__y")
	if err := s.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if exists(t, s, a) {
		t.Fatal("exists after Delete")
	}
	if err := s.AddTools(ctx, a, []string{"x__z"}); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("AddTools after Delete: err = %v, want ErrNotFound", err)
	}
	if exists(t, s, a) || len(tools(t, s, a)) != 0 {
		t.Fatal("AddTools revived a deleted session")
	}
	if err := s.Delete(ctx, a); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if err := s.Delete(ctx, uid(t, "never")); err != nil {
		t.Fatalf("Delete of an unknown session: %v", err)
	}
}

func testCreateTwice(t *testing.T, s session.Store, c *Clock) {
	a := uid(t, "a")
	mustCreate(t, s, a, 10*time.Minute)
	mustAdd(t, s, a, "x__y")
	if err := s.Create(ctx, a, "key:owner", time.Hour); err == nil {
		t.Fatal("Create of a live id succeeded")
	}
	if got := tools(t, s, a); !reflect.DeepEqual(got, []string{"x__y"}) {
		t.Fatalf("failed Create lost the session's tools: %v", got)
	}
	c.Advance(11 * time.Minute)
	mustCreate(t, s, a, 10*time.Minute) // the old one expired: the id is free
	if got := tools(t, s, a); len(got) != 0 {
		t.Fatalf("re-created session inherited tools %v", got)
	}
}

func testBadInput(t *testing.T, s session.Store, _ *Clock) {
	if err := s.Create(ctx, "", "key:owner", time.Hour); err == nil {
		t.Error("Create with an empty id succeeded")
	}
	if err := s.Create(ctx, uid(t, "a"), "key:owner", 0); err == nil {
		t.Error("Create with ttl 0 succeeded")
	}
	if err := s.Create(ctx, uid(t, "b"), "key:owner", -time.Second); err == nil {
		t.Error("Create with a negative ttl succeeded")
	}
	if ok, err := s.Exists(ctx, ""); err != nil || ok {
		t.Errorf("Exists(\"\") = %v, %v; want false, nil", ok, err)
	}
	if got, err := s.Tools(ctx, ""); err != nil || len(got) != 0 {
		t.Errorf("Tools(\"\") = %v, %v; want empty, nil", got, err)
	}
	if err := s.AddTools(ctx, "", []string{"a__b"}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("AddTools(\"\") = %v, want ErrNotFound", err)
	}
}

func testConcurrent(t *testing.T, s session.Store, _ *Clock) {
	a := uid(t, "a")
	mustCreate(t, s, a, time.Hour)
	const workers, each = 6, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	var want []string
	for w := 0; w < workers; w++ {
		for i := 0; i < each; i++ {
			want = append(want, fmt.Sprintf("w%d__t%d", w, i))
		}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := s.AddTools(ctx, a, []string{fmt.Sprintf("w%d__t%d", w, i)}); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sort.Strings(want)
	if got := tools(t, s, a); !reflect.DeepEqual(got, want) {
		t.Fatalf("concurrent AddTools lost updates: got %d ids, want %d", len(got), len(want))
	}
}

func testManyTools(t *testing.T, s session.Store, _ *Clock) {
	a := uid(t, "a")
	mustCreate(t, s, a, time.Hour)
	var ids []string
	for i := 0; i < 500; i++ {
		ids = append(ids, fmt.Sprintf("server-%02d__some_tool_name_%03d", i%17, i))
	}
	mustAdd(t, s, a, ids[:250]...)
	mustAdd(t, s, a, ids[200:]...)
	sort.Strings(ids)
	if got := tools(t, s, a); !reflect.DeepEqual(got, ids) {
		t.Fatalf("got %d tools, want %d", len(got), len(ids))
	}
}

// testOwner: a session remembers the principal that created it, for as
// long as it lives; an unknown, expired or deleted session has none.
func testOwner(t *testing.T, s session.Store, c *Clock) {
	a, b, gone := uid(t, "a"), uid(t, "b"), uid(t, "gone")
	if err := s.Create(ctx, a, "key:alice", 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, b, "oauth:https://issuer|bob", 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	owner := func(id string) (string, bool) {
		t.Helper()
		p, live, err := s.Owner(ctx, id)
		if err != nil {
			t.Fatalf("Owner(%s): %v", id, err)
		}
		return p, live
	}
	if p, live := owner(a); !live || p != "key:alice" {
		t.Fatalf("Owner(a) = %q, %v; want key:alice, true", p, live)
	}
	if p, live := owner(b); !live || p != "oauth:https://issuer|bob" {
		t.Fatalf("Owner(b) = %q, %v", p, live)
	}
	if p, live := owner(gone); live || p != "" {
		t.Fatalf("Owner(unknown) = %q, %v; want \"\", false", p, live)
	}
	if err := s.Create(ctx, a, "key:mallory", time.Hour); err == nil {
		t.Fatal("Create over a live session of another principal succeeded")
	}
	mustAdd(t, s, a, "x__y") // refreshing keeps the owner
	if p, _ := owner(a); p != "key:alice" {
		t.Fatalf("after AddTools and a refused Create, Owner(a) = %q", p)
	}
	if err := s.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	if p, live := owner(b); live || p != "" {
		t.Fatalf("Owner(deleted) = %q, %v", p, live)
	}
	c.Advance(11 * time.Minute)
	if p, live := owner(a); live || p != "" {
		t.Fatalf("Owner(expired) = %q, %v", p, live)
	}
}
