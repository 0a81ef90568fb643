package redact

import (
	"context"
	"log/slog"
)

// Handler returns a slog.Handler that passes every record to h with
// credentials and session ids removed (Text) from its message and from
// every string and error attribute, so that no log line can carry them
// whichever code wrote it (the gateway's, mcp-go's, an upstream's stderr).
func Handler(h slog.Handler) slog.Handler {
	if _, ok := h.(handler); ok {
		return h
	}
	return handler{h}
}

type handler struct{ next slog.Handler }

func (h handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, Text(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = attr(a)
	}
	return handler{h.next.WithAttrs(clean)}
}

func (h handler) WithGroup(name string) slog.Handler { return handler{h.next.WithGroup(name)} }

func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Text(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, ga := range g {
			clean[i] = attr(ga)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, Text(x.Error()))
		case []string:
			clean := make([]string, len(x))
			for i, s := range x {
				clean[i] = Text(s)
			}
			return slog.Any(a.Key, clean)
		case map[string]string:
			clean := make(map[string]string, len(x))
			for k, s := range x {
				clean[k] = Text(s)
			}
			return slog.Any(a.Key, clean)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
