package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/toolrag/mcp-gateway/internal/redact"
)

// rawStep and rawPlan accept what chat models actually write: numeric or
// string ids and groups, a single dependency instead of a list, "tool" or
// "arguments" instead of "call_name" or "arguments_hint".
type rawStep struct {
	ID            json.RawMessage `json:"id"`
	CallName      json.RawMessage `json:"call_name"`
	Tool          json.RawMessage `json:"tool"`
	ArgumentsHint json.RawMessage `json:"arguments_hint"`
	Arguments     json.RawMessage `json:"arguments"`
	DependsOn     json.RawMessage `json:"depends_on"`
	Group         json.RawMessage `json:"group"`
	ToolType      json.RawMessage `json:"tool_type"`
}

type rawPlan struct {
	Steps   *[]rawStep      `json:"steps"`
	Notes   json.RawMessage `json:"notes"`
	Missing json.RawMessage `json:"missing"`
	Plan    json.RawMessage `json:"plan"` // some models nest the plan
}

// parseReply extracts the JSON plan from the model's reply, tolerating
// code fences and text around the object.
func parseReply(content string) (rawPlan, error) {
	s := strings.TrimSpace(content)
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:] // drop the fence's language tag ("json")
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			rest = rest[:j]
		}
		s = strings.TrimSpace(rest)
	}
	var rp rawPlan
	err := json.Unmarshal([]byte(s), &rp)
	if err != nil {
		// Text around the object: take the outermost braces.
		i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
		if i < 0 || j <= i {
			return rawPlan{}, fmt.Errorf("the reply is not a JSON plan: %s", redact.Snippet([]byte(content), ""))
		}
		rp = rawPlan{}
		if err := json.Unmarshal([]byte(s[i:j+1]), &rp); err != nil {
			return rawPlan{}, fmt.Errorf("the reply is not a valid JSON plan (%v): %s", err, redact.Snippet([]byte(content), ""))
		}
	}
	if rp.Steps == nil && len(rp.Plan) > 0 {
		var inner rawPlan
		if json.Unmarshal(rp.Plan, &inner) == nil && inner.Steps != nil {
			if len(inner.Notes) == 0 {
				inner.Notes = rp.Notes
			}
			if len(inner.Missing) == 0 {
				inner.Missing = rp.Missing
			}
			rp = inner
		}
	}
	if rp.Steps == nil {
		return rawPlan{}, fmt.Errorf("the reply has no \"steps\": %s", redact.Snippet([]byte(content), ""))
	}
	return rp, nil
}

// finish validates a raw plan against the candidates.
func finish(rp rawPlan, candidates []Candidate) (Plan, error) {
	exact := make(map[string]Candidate, len(candidates))
	folded := map[string][]Candidate{}
	short := map[string][]Candidate{}
	for _, c := range candidates {
		exact[c.CallName] = c
		folded[strings.ToLower(c.CallName)] = append(folded[strings.ToLower(c.CallName)], c)
		if i := strings.Index(c.CallName, "__"); i > 0 {
			k := strings.ToLower(c.CallName[i+2:])
			short[k] = append(short[k], c)
		}
	}
	resolve := func(name string) (Candidate, bool) {
		if c, ok := exact[name]; ok {
			return c, true
		}
		if cs := folded[strings.ToLower(name)]; len(cs) == 1 {
			return cs[0], true
		}
		if cs := short[strings.ToLower(name)]; len(cs) == 1 {
			return cs[0], true
		}
		return Candidate{}, false
	}

	plan := Plan{Steps: []Step{}, Notes: flexText(rp.Notes), Missing: []string{}}
	addMissing := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" {
			return
		}
		for _, m := range plan.Missing {
			if m == s {
				return
			}
		}
		plan.Missing = append(plan.Missing, s)
	}
	for _, m := range flexStrings(rp.Missing) {
		addMissing(m)
	}

	type kept struct {
		step    Step
		rawDeps []string
		group   int
	}
	var steps []kept
	newID := map[string]string{} // the model's id → the kept step's id
	dropped := map[string]bool{}
	used := map[string]bool{}
	truncated := 0
	for i, rs := range *rp.Steps {
		origID := flexString(rs.ID)
		name := flexString(rs.CallName)
		if name == "" {
			name = flexString(rs.Tool)
		}
		c, ok := resolve(name)
		if !ok {
			addMissing(name)
			if origID != "" {
				dropped[origID] = true
			}
			continue
		}
		if len(steps) == MaxSteps {
			truncated++
			if origID != "" {
				dropped[origID] = true
			}
			continue
		}
		id := origID
		if id == "" || used[id] {
			for n := i + 1; ; n++ {
				id = "s" + strconv.Itoa(n)
				if !used[id] {
					break
				}
			}
		}
		used[id] = true
		if origID != "" {
			if _, dup := newID[origID]; !dup {
				newID[origID] = id
			}
		}
		hint := rs.ArgumentsHint
		if isNull(hint) {
			hint = rs.Arguments
		}
		st := Step{ID: id, CallName: c.CallName, DependsOn: []string{}, ToolType: flexString(rs.ToolType)}
		if !isNull(hint) {
			var buf bytes.Buffer
			if json.Compact(&buf, hint) == nil {
				st.ArgumentsHint = buf.Bytes()
			}
		}
		if st.ToolType == "" || (c.ToolType != "" && st.ToolType != c.ToolType) {
			st.ToolType = c.ToolType // the catalog's classification wins
		}
		steps = append(steps, kept{step: st, rawDeps: flexStrings(rs.DependsOn), group: flexInt(rs.Group)})
	}
	if truncated > 0 {
		plan.Notes = strings.TrimSpace(plan.Notes + fmt.Sprintf(" (%d further steps were dropped: a plan keeps at most %d.)", truncated, MaxSteps))
	}

	// Resolve dependencies: keep those on kept steps, drop the rest.
	index := map[string]int{}
	for i, k := range steps {
		index[k.step.ID] = i
	}
	deps := make([][]int, len(steps))
	for i := range steps {
		seen := map[int]bool{}
		for _, d := range steps[i].rawDeps {
			id, ok := newID[d]
			if !ok {
				continue // unknown or dropped step
			}
			j := index[id]
			if j == i || seen[j] {
				continue
			}
			seen[j] = true
			deps[i] = append(deps[i], j)
			steps[i].step.DependsOn = append(steps[i].step.DependsOn, id)
		}
	}

	// Order topologically (stable), then assign groups consistent with the
	// dependencies, keeping the model's grouping where it is higher.
	order, err := topoOrder(deps)
	if err != nil {
		var cyc []string
		for _, i := range err.(cycleError) {
			cyc = append(cyc, steps[i].step.ID)
		}
		return Plan{}, fmt.Errorf("planner: the model's plan has a dependency cycle among steps %s", strings.Join(cyc, ", "))
	}
	group := make([]int, len(steps))
	for _, i := range order {
		g := max(steps[i].group, 1)
		for _, j := range deps[i] {
			g = max(g, group[j]+1)
		}
		group[i] = g
	}
	distinct := map[int]int{}
	var gs []int
	for _, g := range group {
		if _, ok := distinct[g]; !ok {
			distinct[g] = 0
			gs = append(gs, g)
		}
	}
	sort.Ints(gs)
	for n, g := range gs {
		distinct[g] = n + 1
	}
	for _, i := range order {
		st := steps[i].step
		st.Group = distinct[group[i]]
		plan.Steps = append(plan.Steps, st)
	}
	sort.SliceStable(plan.Steps, func(a, b int) bool { return plan.Steps[a].Group < plan.Steps[b].Group })
	return plan, nil
}

type cycleError []int

func (c cycleError) Error() string { return "dependency cycle" }

// topoOrder is Kahn's algorithm taking the lowest ready index first, so the
// model's order is kept where the dependencies allow.
func topoOrder(deps [][]int) ([]int, error) {
	n := len(deps)
	indeg := make([]int, n)
	users := make([][]int, n)
	for i, ds := range deps {
		indeg[i] = len(ds)
		for _, j := range ds {
			users[j] = append(users[j], i)
		}
	}
	done := make([]bool, n)
	var order []int
	for len(order) < n {
		next := -1
		for i := 0; i < n; i++ {
			if !done[i] && indeg[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			var cyc cycleError
			for i := 0; i < n; i++ {
				if !done[i] {
					cyc = append(cyc, i)
				}
			}
			return nil, cyc
		}
		done[next] = true
		order = append(order, next)
		for _, u := range users[next] {
			indeg[u]--
		}
	}
	return order, nil
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// flexString reads a string or a number; anything else gives "".
func flexString(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// flexStrings reads a list of strings or numbers, or a single one.
func flexStrings(raw json.RawMessage) []string {
	if isNull(raw) {
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		var out []string
		for _, r := range list {
			if s := flexString(r); s != "" {
				out = append(out, s)
			} else if t := flexText(r); t != "" {
				out = append(out, t)
			}
		}
		return out
	}
	if s := flexString(raw); s != "" {
		return []string{s}
	}
	return nil
}

// flexText reads a string, a list of strings (joined) or any other JSON
// value (as compact JSON).
func flexText(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	if s := flexString(raw); s != "" {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, " ")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return ""
}

// flexInt reads a number or a numeric string; 0 when absent or invalid.
func flexInt(raw json.RawMessage) int {
	s := flexString(raw)
	if s == "" {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1000 {
		return 0
	}
	return int(f)
}
