package samtemplate

import (
	"strings"
	"testing"
)

// Every function has X-Ray active tracing, and with CollectorLayerArn the
// collector layer and OTLP export to it (what infra/ does with
// tracing.collectorLayerArn).
func TestTracingSAM(t *testing.T) {
	tmpl := load(t)
	g, _ := tmpl.Globals["Function"].(map[string]any)
	if g["Tracing"] != "Active" {
		t.Errorf("Globals.Function.Tracing = %v, want Active", g["Tracing"])
	}
	if l := js(g["Layers"]); !strings.Contains(l, `"Fn::If":["CollectorLayer",[{"Ref":"CollectorLayerArn"}]`) {
		t.Errorf("Globals.Function.Layers = %s, want the collector layer when CollectorLayerArn is set", l)
	}
	if _, ok := tmpl.Parameters["CollectorLayerArn"]; !ok {
		t.Error("no CollectorLayerArn parameter")
	}
	if c := js(tmpl.Conditions["CollectorLayer"]); !strings.Contains(c, `"Ref":"CollectorLayerArn"`) {
		t.Errorf("condition CollectorLayer = %s", c)
	}
	for _, f := range tmpl.Functions() {
		if tr, ok := tmpl.Resources[f.LogicalID].Properties["Tracing"]; ok && tr != "Active" {
			t.Errorf("%s: Tracing %v overrides Active", f.LogicalID, tr)
		}
		if e := js(f.Env["OTEL_TRACES_EXPORTER"]); !strings.Contains(e, `"Fn::If":["CollectorLayer","otlp","none"]`) {
			t.Errorf("%s: OTEL_TRACES_EXPORTER = %s", f.LogicalID, e)
		}
		if f.Env["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://localhost:4318" {
			t.Errorf("%s: OTEL_EXPORTER_OTLP_ENDPOINT = %v", f.LogicalID, f.Env["OTEL_EXPORTER_OTLP_ENDPOINT"])
		}
	}
}
