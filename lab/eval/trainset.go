package eval

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// TrainingSetOptions configure FromTrainingSet.
type TrainingSetOptions struct {
	// Datasets are the folder names under the training directory to use
	// (default: every folder holding tools.jsonl and pairs.jsonl).
	Datasets []string
	// QueryDatasets, when set, limits the queries to these datasets (the
	// catalog still holds every dataset in Datasets), for example the
	// datasets a model under test was not trained on.
	QueryDatasets []string
	// HoldOut is the share of each dataset's labelled tools whose pairs
	// become queries (default 0.1). With Seed it reproduces the
	// validation split of lab/train (a seeded FNV-1a hash of the tool id),
	// so that the queries are ones the trained model never saw.
	HoldOut float64
	// Seed of the split (default 1, as lab/train).
	Seed uint64
	// MaxQueries caps the queries taken from one dataset (default 150; a
	// negative value takes all), chosen by a seeded hash of the query so
	// that the large intent sets do not drown the others.
	MaxQueries int
}

// TrainingSetInfo describes a converted set.
type TrainingSetInfo struct {
	Tools     int
	Servers   int
	Queries   int
	ByDataset map[string]int // queries per dataset
}

// trainTool is one line of a training tools.jsonl.
type trainTool struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Grouping fields of some datasets (the service an API belongs to).
	API            string `json:"api"`
	APIDescription string `json:"api_description"`
	Service        string `json:"service"`
	Domain         string `json:"domain"`
	Scenario       string `json:"scenario"`
	Field          string `json:"field"`
	Framework      string `json:"framework"`
	Category       string `json:"category"`
}

type trainPair struct {
	Query   string   `json:"query"`
	ToolIDs []string `json:"tool_ids"`
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// sanitizeID makes s usable in a server id or tool name.
func sanitizeID(s string) string {
	s = unsafeID.ReplaceAllString(strings.TrimSpace(s), "_")
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	return strings.Trim(s, "_")
}

// group is the service a training tool belongs to: its server in the
// converted catalog (the dataset name when the dataset has no grouping).
func (t trainTool) group() (name, description string) {
	switch {
	case t.API != "":
		return t.API, t.APIDescription
	case t.Service != "":
		return t.Service, ""
	case t.Domain != "" && t.Framework == "":
		return t.Domain, "" // clinc150
	case t.Framework != "":
		return t.Framework, "" // gorilla_apibench
	case t.Scenario != "":
		return t.Scenario, ""
	case t.Field != "":
		return t.Field, ""
	case t.Category != "":
		return t.Category, ""
	}
	return "", ""
}

// FromTrainingSet converts the training data in trainDir (../shared/train:
// one folder per dataset with tools.jsonl and pairs.jsonl) into a benchmark
// folder outDir in the ../shared/bench layout, for model selection and
// weight tuning (a DEV set) without touching the benchmark sets.
//
// The catalog is every tool of the chosen datasets. Each tool's server is
// "<dataset>.<group>" where the dataset groups its tools (an API, service,
// domain or field), else the dataset name, so that two-level scoring has
// servers to work with. The queries are the pairs that name a held-out tool
// (see TrainingSetOptions.HoldOut); query ids are "<dataset>-<n>" and the
// Set field names the dataset.
func FromTrainingSet(trainDir, outDir string, opts TrainingSetOptions) (TrainingSetInfo, error) {
	info := TrainingSetInfo{ByDataset: map[string]int{}}
	if opts.HoldOut == 0 {
		opts.HoldOut = 0.1
	}
	if opts.HoldOut < 0 || opts.HoldOut > 1 {
		return info, fmt.Errorf("eval: HoldOut %v is not a share between 0 and 1", opts.HoldOut)
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.MaxQueries == 0 {
		opts.MaxQueries = 150
	}
	names := opts.Datasets
	if len(names) == 0 {
		entries, err := os.ReadDir(trainDir)
		if err != nil {
			return info, fmt.Errorf("eval: reading the training directory: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			if _, err := os.Stat(filepath.Join(trainDir, e.Name(), "pairs.jsonl")); err == nil {
				names = append(names, e.Name())
			}
		}
	}
	if len(names) == 0 {
		return info, fmt.Errorf("eval: no dataset with tools.jsonl and pairs.jsonl under %s", trainDir)
	}
	sort.Strings(names)

	var toolLines, queryLines [][]byte
	servers := map[string]bool{}
	for _, ds := range names {
		if err := catalog.ValidServerID(ds); err != nil {
			return info, fmt.Errorf("eval: dataset folder %q: %w", ds, err)
		}
		idMap := map[string]string{} // training id → converted id
		taken := map[string]bool{}   // converted ids
		err := readJSONL(filepath.Join(trainDir, ds, "tools.jsonl"), func(line int, raw []byte) error {
			var t trainTool
			if err := json.Unmarshal(raw, &t); err != nil {
				return err
			}
			if t.ID == "" {
				return errors.New("\"id\" is required")
			}
			if _, dup := idMap[t.ID]; dup {
				return fmt.Errorf("duplicate tool id %q", t.ID)
			}
			name := t.ID
			if _, n, ok := catalog.SplitToolID(t.ID); ok {
				name = n
			}
			name = sanitizeID(name)
			if name == "" {
				return fmt.Errorf("tool id %q has no usable name", t.ID)
			}
			server := ds
			g, gdesc := t.group()
			if g = sanitizeID(g); g != "" {
				if len(g) > 48 {
					g = strings.Trim(g[:48], "_")
				}
				server = ds + "." + g
			}
			id := catalog.ToolID(server, name)
			for n := 2; taken[id]; n++ {
				id = catalog.ToolID(server, fmt.Sprintf("%s-%d", name, n))
			}
			taken[id] = true
			_, name, _ = catalog.SplitToolID(id)
			idMap[t.ID] = id
			servers[server] = true
			title := ""
			if t.Name != name {
				title = t.Name
			}
			schema := t.InputSchema
			if string(schema) == "null" {
				schema = nil
			}
			b, err := json.Marshal(map[string]any{
				"id": id, "server": server, "name": name, "title": title,
				"description": t.Description, "input_schema": schema,
				"server_title": g, "server_description": gdesc,
			})
			if err != nil {
				return err
			}
			toolLines = append(toolLines, b)
			return nil
		})
		if err != nil {
			return info, err
		}

		if len(opts.QueryDatasets) > 0 && !slices.Contains(opts.QueryDatasets, ds) {
			continue
		}
		// The held-out tools: a share of the labelled tools, by seeded hash.
		var pairs []trainPair
		labelled := map[string]bool{}
		err = readJSONL(filepath.Join(trainDir, ds, "pairs.jsonl"), func(line int, raw []byte) error {
			var p trainPair
			if err := json.Unmarshal(raw, &p); err != nil {
				return err
			}
			for _, id := range p.ToolIDs {
				if _, ok := idMap[id]; !ok {
					return fmt.Errorf("tool %q is not in tools.jsonl", id)
				}
				labelled[id] = true
			}
			pairs = append(pairs, p)
			return nil
		})
		if err != nil {
			return info, err
		}
		ids := slices.Collect(maps.Keys(labelled))
		sort.Slice(ids, func(i, j int) bool { return splitHash(ids[i], opts.Seed) < splitHash(ids[j], opts.Seed) })
		heldOut := map[string]bool{}
		for _, id := range ids[:int(float64(len(ids))*opts.HoldOut+0.5)] {
			heldOut[id] = true
		}
		var val []trainPair
		seen := map[string]bool{}
		for _, p := range pairs {
			held := false
			for _, id := range p.ToolIDs {
				held = held || heldOut[id]
			}
			if q := strings.TrimSpace(p.Query); held && q != "" && !seen[q] {
				seen[q] = true
				val = append(val, p)
			}
		}
		sort.SliceStable(val, func(i, j int) bool {
			return splitHash(val[i].Query, opts.Seed) < splitHash(val[j].Query, opts.Seed)
		})
		if opts.MaxQueries > 0 && len(val) > opts.MaxQueries {
			val = val[:opts.MaxQueries]
		}
		for n, p := range val {
			rel := make([]string, 0, len(p.ToolIDs))
			groups := make([][]string, 0, len(p.ToolIDs))
			dup := map[string]bool{}
			for _, id := range p.ToolIDs {
				if c := idMap[id]; !dup[c] {
					dup[c] = true
					rel = append(rel, c)
					groups = append(groups, []string{c})
				}
			}
			b, err := json.Marshal(Query{ID: fmt.Sprintf("%s-%d", ds, n), Query: p.Query, Relevant: rel, Groups: groups, Set: ds})
			if err != nil {
				return info, err
			}
			queryLines = append(queryLines, b)
		}
		info.ByDataset[ds] = len(val)
		info.Queries += len(val)
	}
	info.Tools, info.Servers = len(toolLines), len(servers)

	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return info, fmt.Errorf("eval: %w", err)
	}
	if err := writeLines(filepath.Join(outDir, "tools.jsonl"), toolLines); err != nil {
		return info, err
	}
	if err := writeLines(filepath.Join(outDir, "queries.jsonl"), queryLines); err != nil {
		return info, err
	}
	return info, nil
}

// splitHash is FNV-1a over the little-endian seed and s (lab/train's
// split hash).
func splitHash(s string, seed uint64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(s))
	return h.Sum64()
}

// createIn creates dir (with its parents) and the file name in it.
func createIn(dir, name string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	return f, nil
}

func writeLines(path string, lines [][]byte) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		w.Write(l)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("eval: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("eval: writing %s: %w", path, err)
	}
	return nil
}
