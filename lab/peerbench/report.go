package peerbench

import (
	"fmt"
	"io"
	"slices"
	"time"
)

func median[T any](rs []Round, f func(Round) T, less func(a, b T) int) T {
	v := make([]T, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.SortFunc(v, less)
	return v[len(v)/2]
}

func medDur(rs []Round, f func(Round) time.Duration) time.Duration {
	return median(rs, f, func(a, b time.Duration) int { return int(a - b) })
}

func medOps(rs []Round) float64 {
	return median(rs, func(r Round) float64 { return r.Ops }, func(a, b float64) int {
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
}

func opsSpan(rs []Round) span {
	var s span
	for i, r := range rs {
		s.add(r.Ops, i == 0)
	}
	return s
}

// Write prints the results as a Markdown table, then the ratios of the
// bridge and serve to each peer and what each adds over direct stdio.
func Write(w io.Writer, results []*Result, cfg Config) {
	cfg = cfg.withDefaults()
	fmt.Fprintf(w, "%d interleaved rounds; serial: %d calls on one session; concurrent: %d sessions for %s; medians over rounds (ops/s: lowest–highest); CPU: the process tree's user+system time per call (/proc), and in brackets its root process's own (the proxy without the servers it runs); RSS: the tree's highest sampled total.\n\n",
		cfg.Rounds, cfg.SerialCalls, cfg.Sessions, cfg.Duration)
	fmt.Fprintln(w, "| target | protocol | serial p50 / p99 | serial CPU/call (own) | concurrent ops/s | concurrent p50 / p99 | concurrent CPU/call (own) | peak RSS (processes) | errors |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	byName := map[string]*Result{}
	for _, r := range results {
		byName[r.Name] = r
		if len(r.Rounds) == 0 {
			continue
		}
		errs := 0
		for _, x := range r.Rounds {
			errs += x.Errors
		}
		s := opsSpan(r.Rounds)
		fmt.Fprintf(w, "| %s | %s | %.2f / %.2f ms | %d µs (%d) | %.0f (%.0f–%.0f) | %.1f / %.1f ms | %d µs (%d) | %.0f MB (%d) | %d |\n",
			r.Name, r.Protocol,
			ms(medDur(r.Rounds, func(x Round) time.Duration { return x.SerialP50 })),
			ms(medDur(r.Rounds, func(x Round) time.Duration { return x.SerialP99 })),
			medDur(r.Rounds, func(x Round) time.Duration { return x.SerialCPU }).Microseconds(),
			medDur(r.Rounds, func(x Round) time.Duration { return x.SerialOwnCPU }).Microseconds(),
			medOps(r.Rounds), s.lo, s.hi,
			ms(medDur(r.Rounds, func(x Round) time.Duration { return x.ConcP50 })),
			ms(medDur(r.Rounds, func(x Round) time.Duration { return x.ConcP99 })),
			medDur(r.Rounds, func(x Round) time.Duration { return x.ConcCPU }).Microseconds(),
			medDur(r.Rounds, func(x Round) time.Duration { return x.ConcOwnCPU }).Microseconds(),
			float64(r.PeakRSS)/1e6, r.Procs, errs)
	}
	fmt.Fprintln(w)
	for _, pair := range [][2]string{{Bridge, BridgeBaseline}, {Serve, ServeBaseline}, {ServeGo, ServeGoBaseline}} {
		n, o := byName[pair[0]], byName[pair[1]]
		if n == nil || o == nil || len(n.Rounds) == 0 || len(o.Rounds) == 0 {
			continue
		}
		fmt.Fprintf(w, "- %s ÷ its baseline: %.2f× the ops/s, %.2f× the CPU per serial call, %.2f× per concurrent call\n", pair[0],
			medOps(n.Rounds)/medOps(o.Rounds),
			float64(medDur(n.Rounds, func(x Round) time.Duration { return x.SerialCPU }))/float64(medDur(o.Rounds, func(x Round) time.Duration { return x.SerialCPU })),
			float64(medDur(n.Rounds, func(x Round) time.Duration { return x.ConcCPU }))/float64(medDur(o.Rounds, func(x Round) time.Duration { return x.ConcCPU })))
	}
	for _, ours := range []string{Bridge, Serve} {
		o := byName[ours]
		if o == nil || len(o.Rounds) == 0 {
			continue
		}
		for _, peer := range []string{Supergateway, MCPProxy, Upstream} {
			p := byName[peer]
			if p == nil || len(p.Rounds) == 0 {
				continue
			}
			fmt.Fprintf(w, "- %s ÷ %s: %.1f× the ops/s, %.2f× the memory, %.2f× the CPU per concurrent call\n", ours, peer,
				medOps(o.Rounds)/medOps(p.Rounds), float64(o.PeakRSS)/float64(p.PeakRSS),
				float64(medDur(o.Rounds, func(x Round) time.Duration { return x.ConcCPU }))/float64(medDur(p.Rounds, func(x Round) time.Duration { return x.ConcCPU })))
		}
	}
	if d := byName[StdioDirect]; d != nil && len(d.Rounds) > 0 {
		fmt.Fprintln(w)
		base50 := medDur(d.Rounds, func(x Round) time.Duration { return x.SerialP50 })
		baseCPU := medDur(d.Rounds, func(x Round) time.Duration { return x.SerialCPU })
		for _, r := range results {
			if r.Name == StdioDirect || len(r.Rounds) == 0 {
				continue
			}
			fmt.Fprintf(w, "- %s adds %.2f ms per serial call (p50) and %d µs of CPU per call over stdio direct\n", r.Name,
				ms(medDur(r.Rounds, func(x Round) time.Duration { return x.SerialP50 })-base50),
				(medDur(r.Rounds, func(x Round) time.Duration { return x.SerialCPU }) - baseCPU).Microseconds())
		}
	}
}
