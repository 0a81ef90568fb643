package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// EMF renders a Registry as CloudWatch Embedded Metric Format log lines:
// a JSON object on one line that CloudWatch Logs turns into metrics, with
// no API call and no agent (what a Lambda function writes to stdout).
// The series are the ones the Prometheus endpoint serves:
//
//   - names ending in _total (counters, including CounterFunc ones) are
//     written as the increase since the previous line (Unit Count);
//   - other gauges as their current value;
//   - histograms as <name>_count (observations since the previous line),
//     <name>_p50 and <name>_p99 (seconds, over those observations; absent
//     when there were none).
//
// Labels become part of the metric name (name{k=v,...}); each line carries
// the Dimensions as properties and declares them as the one dimension set.
type EMF struct {
	Namespace  string
	Dimensions map[string]string // e.g. FunctionName

	mu    sync.Mutex
	last  map[string]float64
	lastH map[string][]int64
}

// emfMaxMetrics is CloudWatch's limit of metrics per directive.
const emfMaxMetrics = 100

// Write writes one EMF line (more when there are over 100 series) for the
// registry's current values.
func (e *EMF) Write(w io.Writer, r *Registry, now time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last == nil {
		e.last, e.lastH = map[string]float64{}, map[string][]int64{}
	}
	type metric struct {
		name, unit string
		value      float64
	}
	var ms []metric

	r.mu.Lock()
	values := map[string]float64{}
	for k, c := range r.counters {
		values[k] = float64(c.Value())
	}
	for k, g := range r.gauges {
		values[k] = g()
	}
	hists := map[string][]int64{}
	for k, h := range r.hists {
		h.mu.Lock()
		c := append([]int64(nil), h.counts...)
		if c == nil {
			c = make([]int64, len(Buckets))
		}
		hists[k] = append(c, h.n)
		h.mu.Unlock()
	}
	r.mu.Unlock()

	for k, v := range values {
		name := emfName(k)
		base, _ := splitSeries(k)
		if strings.HasSuffix(base, "_total") {
			d := v - e.last[k]
			if d < 0 { // restarted counter
				d = v
			}
			e.last[k] = v
			ms = append(ms, metric{name, "Count", d})
			continue
		}
		ms = append(ms, metric{name, emfUnit(base), v})
	}
	for k, cum := range hists {
		prev := e.lastH[k]
		delta := make([]int64, len(cum))
		for i := range cum {
			delta[i] = cum[i]
			if i < len(prev) {
				delta[i] -= prev[i]
			}
		}
		e.lastH[k] = cum
		n := delta[len(delta)-1]
		base, labels := splitSeries(k)
		name := emfName(base + "_count" + labels)
		ms = append(ms, metric{name, "Count", float64(n)})
		if n > 0 {
			ms = append(ms, metric{emfName(base + "_p50" + labels), "Seconds", quantile(delta[:len(delta)-1], n, 0.5)})
			ms = append(ms, metric{emfName(base + "_p99" + labels), "Seconds", quantile(delta[:len(delta)-1], n, 0.99)})
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })

	dims := make([]string, 0, len(e.Dimensions))
	for k := range e.Dimensions {
		dims = append(dims, k)
	}
	sort.Strings(dims)
	for start := 0; start < len(ms); start += emfMaxMetrics {
		part := ms[start:min(start+emfMaxMetrics, len(ms))]
		defs := make([]map[string]string, 0, len(part))
		doc := map[string]any{}
		for k, v := range e.Dimensions {
			doc[k] = v
		}
		for _, m := range part {
			defs = append(defs, map[string]string{"Name": m.name, "Unit": m.unit})
			doc[m.name] = m.value
		}
		doc["_aws"] = map[string]any{
			"Timestamp": now.UnixMilli(),
			"CloudWatchMetrics": []any{map[string]any{
				"Namespace": e.Namespace, "Dimensions": [][]string{dims}, "Metrics": defs,
			}},
		}
		line, err := json.Marshal(doc)
		if err != nil {
			return fmt.Errorf("encode the EMF line: %w", err)
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// quantile is the bucket upper bound holding the q-quantile of n
// observations with cumulative bucket counts cum.
func quantile(cum []int64, n int64, q float64) float64 {
	target := int64(q*float64(n) + 0.999999)
	for i, b := range Buckets {
		if i < len(cum) && cum[i] >= target {
			return b
		}
	}
	return Buckets[len(Buckets)-1] * 2 // past the last bucket
}

// emfName is a series key without quotes: name{k=v,...}.
func emfName(series string) string { return strings.ReplaceAll(series, `"`, "") }

// emfUnit guesses a gauge's unit from its name.
func emfUnit(name string) string {
	switch {
	case strings.HasSuffix(name, "_seconds"):
		return "Seconds"
	case strings.HasSuffix(name, "_bytes"):
		return "Bytes"
	}
	return "None"
}
