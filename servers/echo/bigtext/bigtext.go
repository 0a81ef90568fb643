// Package bigtext makes the text the echo server's big tool answers
// (servers/echo -big), for the server and for the tests that check it.
package bigtext

import "strconv"

// Text is n bytes of numbered lines "%08d\n", cut at n, so a reader can
// check every byte came back in order.
func Text(n int) string {
	b := make([]byte, 0, n+9)
	for i := 0; len(b) < n; i++ {
		line := strconv.AppendInt(nil, int64(i), 10)
		for range 8 - len(line) {
			b = append(b, '0')
		}
		b = append(append(b, line...), '\n')
	}
	return string(b[:n])
}
