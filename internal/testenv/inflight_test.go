package testenv

import (
	"sync"
	"testing"
)

func TestInFlight(t *testing.T) {
	var f InFlight
	for _, n := range []int{1, 4, 2} {
		f.Reset()
		release := make(chan struct{})
		var entered, done sync.WaitGroup
		entered.Add(n)
		for range n {
			done.Go(func() {
				leave := f.Enter()
				entered.Done()
				<-release
				leave()
			})
		}
		entered.Wait()
		close(release)
		done.Wait()
		if got := f.Max(); got != int32(n) {
			t.Errorf("%d holders at once: Max() = %d", n, got)
		}
		leave := f.Enter() // all have left: one holder is one
		leave()
		if got := f.Max(); got != int32(n) {
			t.Errorf("after they left: Max() = %d, want still %d", got, n)
		}
	}
}
