// Command relatedprior learns retrieve's related prior (relatedprior.json)
// from the multi-tool pairs of training datasets in the ../shared/train
// format (tools.jsonl, pairs.jsonl): every folder of -train except the
// DEV sets, plus the -extra folders.
//
//	go generate ./pkg/retrieve
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolrag/mcp-gateway/lab/jsonl"
	"github.com/toolrag/mcp-gateway/lab/train"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

func main() {
	trainDir := flag.String("train", "", "folder of training datasets (../shared/train)")
	extra := flag.String("extra", "", "comma-separated extra dataset folders")
	out := flag.String("out", "relatedprior.json", "output file")
	alpha := flag.Float64("alpha", 5, "smoothing: pseudo counts pulling every lift towards 1")
	flag.Parse()
	if *trainDir == "" {
		log.Fatal("genprior: -train is required")
	}
	var dirs []string
	entries, err := os.ReadDir(*trainDir)
	if err != nil {
		log.Fatalf("genprior: %v", err)
	}
	for _, e := range entries {
		if e.IsDir() && !slices.Contains(train.DevDatasets, e.Name()) {
			dirs = append(dirs, filepath.Join(*trainDir, e.Name()))
		}
	}
	if *extra != "" {
		dirs = append(dirs, strings.Split(*extra, ",")...)
	}
	var cats []retrieve.PriorCatalog
	for _, d := range dirs {
		cs, err := load(d)
		if err != nil {
			log.Fatalf("genprior: %s: %v", d, err)
		}
		cats = append(cats, cs...)
	}
	p := retrieve.LearnRelatedPrior(cats, *alpha)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(p); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		log.Fatalf("genprior: %v", err)
	}
	fmt.Println(p)
}

type tool struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Server      string `json:"server"`
	Service     string `json:"service"`
	API         string `json:"api"`
}

// load reads one dataset as one catalog per server (the tool's server,
// service or api field; the dataset as a whole when it has none). A
// task's tools of different servers are not a pair: related lists tools
// of one server.
func load(dir string) ([]retrieve.PriorCatalog, error) {
	type cat struct {
		tools []retrieve.PriorTool
		tasks [][]int
	}
	byServer := map[string]*cat{}
	where := map[string][2]any{} // tool id → server, index
	err := jsonl.ReadFile(filepath.Join(dir, "tools.jsonl"), func(_ int, raw []byte) error {
		var t tool
		if err := json.Unmarshal(raw, &t); err != nil {
			return err
		}
		srv := firstNonEmpty(t.Server, t.Service, t.API)
		name := t.Name
		switch {
		case srv != "" && strings.HasPrefix(name, srv+"."):
			name = name[len(srv)+1:]
		case srv == "" && strings.Contains(name, "."):
			name = name[strings.LastIndex(name, ".")+1:]
		}
		c := byServer[srv]
		if c == nil {
			c = &cat{}
			byServer[srv] = c
		}
		where[t.ID] = [2]any{srv, len(c.tools)}
		c.tools = append(c.tools, retrieve.PriorTool{Name: name, Description: t.Description})
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = jsonl.ReadFile(filepath.Join(dir, "pairs.jsonl"), func(_ int, raw []byte) error {
		var p struct {
			ToolIDs []string `json:"tool_ids"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		perServer := map[string][]int{}
		for _, id := range p.ToolIDs {
			w, ok := where[id]
			if !ok {
				continue
			}
			srv, i := w[0].(string), w[1].(int)
			if !slices.Contains(perServer[srv], i) {
				perServer[srv] = append(perServer[srv], i)
			}
		}
		for srv, ids := range perServer {
			if len(ids) > 1 {
				byServer[srv].tasks = append(byServer[srv].tasks, ids)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []retrieve.PriorCatalog
	for _, k := range slices.Sorted(maps.Keys(byServer)) {
		c := byServer[k]
		out = append(out, retrieve.PriorCatalog{Tools: c.tools, Tasks: c.tasks})
	}
	return out, nil
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
