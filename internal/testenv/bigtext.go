package testenv

import "strconv"

// BigText is the text of n bytes the echo server's big tool answers
// (servers/echo -big): numbered lines "%08d\n", cut at n, so a reader can
// check every byte came back in order.
func BigText(n int) string {
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
