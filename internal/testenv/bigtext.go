package testenv

import (
	"fmt"
	"strings"
)

// BigText is the text of n bytes the echo server's big tool answers
// (servers/echo -big): numbered lines "%08d\n", cut at n, so a reader can
// check every byte came back in order.
func BigText(n int) string {
	var b strings.Builder
	b.Grow(n + 9)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%08d\n", i)
	}
	return b.String()[:n]
}
