package main

import (
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// Every function has X-Ray active tracing; with a collector layer set,
// each function carries the layer and exports OTLP to it.
func TestTracingStack(t *testing.T) {
	cfg, err := LoadConfig("config.example.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServersFile = ""
	r := synth(t, cfg, nil)
	r.tmpl.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), &map[string]any{"TracingConfig": map[string]any{"Mode": "Active"}})

	const layer = "arn:aws:lambda:us-east-1:901920570463:layer:aws-otel-collector-arm64-ver-0-117-0:1"
	cfg.Tracing = TracingConfig{CollectorLayerArn: layer, SampleRatio: 0.25}
	r = synth(t, cfg, nil)
	r.tmpl.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), &map[string]any{
		"TracingConfig": map[string]any{"Mode": "Active"},
		"Layers":        []any{layer},
		"Environment": map[string]any{"Variables": map[string]any{
			"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318",
			"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25",
		}},
	})
}

func TestTracingConfigChecked(t *testing.T) {
	for _, tc := range []struct {
		tracing TracingConfig
		want    string
	}{
		{TracingConfig{CollectorLayerArn: "aws-otel-collector"}, "collectorLayerArn"},
		{TracingConfig{CollectorConfig: "/var/task/collector.yaml"}, "collectorConfig"},
		{TracingConfig{SampleRatio: 2}, "sampleRatio"},
	} {
		cfg, err := LoadConfig("config.example.json")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tracing = tc.tracing
		cfg.Defaults()
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %s", tc.tracing, err, tc.want)
		}
	}
}
