package retrieve

// What a retrieval tells pkg/tracing: a "retrieve" span with one child per
// stage (candidates, keyword, dense, fusion) and the outcome.

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// stageClock records when the stages of one traced retrieval ran; nil
// (tracing off or the request not sampled) records nothing, so an
// untraced retrieval reads no clock.
type stageClock struct {
	ctx     context.Context
	visible int
	t       [numStages][2]time.Time // start and end of each stage
}

// The stages of a retrieval.
const (
	stageCandidates = iota
	stageKeyword
	stageDense
	stageFusion
	numStages
)

// startRetrieve starts the span of one retrieval; clock is nil when it is
// not recorded.
func startRetrieve(ctx context.Context, queries, topK int) (context.Context, trace.Span, *stageClock) {
	if !tracing.Enabled() {
		return ctx, trace.SpanFromContext(context.Background()), nil
	}
	ctx, span := tracing.Start(ctx, "retrieve")
	if !span.IsRecording() {
		return ctx, span, nil
	}
	span.SetAttributes(
		attribute.String("gen_ai.operation.name", "retrieval"),
		attribute.String("gen_ai.data_source.id", "tool-catalog"),
		attribute.Int("toolrag.retrieve.queries", queries),
		attribute.Int("toolrag.retrieve.top_k", topK),
	)
	return ctx, span, &stageClock{ctx: ctx}
}

// mark records now as the start (edge 0) or end (edge 1) of stage.
func (c *stageClock) mark(stage, edge int) {
	if c != nil {
		c.t[stage][edge] = time.Now()
	}
}

// visibleTools ends the candidates stage: snap is the policy's view.
func (c *stageClock) visibleTools(snap *visibleCorpus) {
	if c != nil {
		c.t[stageCandidates][1] = time.Now()
		c.visible = snap.nVisible
	}
}

// endRetrieve records the stages as child spans and the outcome on span.
func endRetrieve(span trace.Span, c *stageClock, results []Result, dense bool, err error) {
	if c == nil {
		tracing.End(span, err)
		return
	}
	ms := func(t [2]time.Time) float64 { return float64(t[1].Sub(t[0]).Microseconds()) / 1000 }
	stage := func(name string, t [2]time.Time, attrs ...attribute.KeyValue) {
		if t[0].IsZero() || t[1].IsZero() {
			return
		}
		_, s := tracing.StartAt(c.ctx, name, t[0])
		s.SetAttributes(attrs...)
		s.End(trace.WithTimestamp(t[1]))
	}
	stage("retrieve candidates", c.t[stageCandidates], attribute.Int("toolrag.retrieve.visible_tools", c.visible))
	stage("retrieve keyword", c.t[stageKeyword])
	if dense {
		stage("retrieve dense", c.t[stageDense])
	}
	stage("retrieve fusion", c.t[stageFusion])
	span.SetAttributes(
		attribute.Int("toolrag.retrieve.visible_tools", c.visible),
		attribute.Bool("toolrag.retrieve.dense", dense),
		attribute.Int("toolrag.retrieve.results", len(results)),
		attribute.Float64("toolrag.retrieve.candidates_ms", ms(c.t[stageCandidates])),
		attribute.Float64("toolrag.retrieve.keyword_ms", ms(c.t[stageKeyword])),
		attribute.Float64("toolrag.retrieve.dense_ms", ms(c.t[stageDense])),
		attribute.Float64("toolrag.retrieve.fusion_ms", ms(c.t[stageFusion])),
	)
	if len(results) > 0 {
		span.SetAttributes(
			attribute.String("toolrag.retrieve.top_match", results[0].Match),
			attribute.String("toolrag.retrieve.top_tool", results[0].Tool.ID),
		)
	}
	tracing.End(span, err)
}
