package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// RealMCPDatasets are the folders of ../shared/train whose tools make the
// real-MCP DEV catalog.
var RealMCPDatasets = []string{"docker_mcp_registry", "tooltalk", "taubench"}

// WriteRealMCPDev writes the real-MCP DEV set into outDir: tools.jsonl,
// the tools of RealMCPDatasets under trainDir (servers: the docker
// server, tooltalk.<server>, taubench.<domain>), and the queries.jsonl
// and tasks.jsonl of devDir (lab/eval/testdata/realmcp, see its README).
func WriteRealMCPDev(trainDir, devDir, outDir string) error {
	f, err := createIn(outDir, "tools.jsonl")
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, ds := range RealMCPDatasets {
		err := readJSONL(filepath.Join(trainDir, ds, "tools.jsonl"), func(line int, raw []byte) error {
			var t toolLine
			if err := json.Unmarshal(raw, &t); err != nil {
				return err
			}
			server := t.Server
			if ds != "docker_mcp_registry" {
				server = ds + "." + t.Server
			}
			return enc.Encode(map[string]any{"server": server, "name": t.Name, "description": t.Description, "input_schema": t.InputSchema})
		})
		if err != nil {
			return err
		}
	}
	for _, name := range []string{"queries.jsonl", "tasks.jsonl"} {
		b, err := os.ReadFile(filepath.Join(devDir, name))
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if err := os.WriteFile(filepath.Join(outDir, name), b, 0o644); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	return f.Close()
}
