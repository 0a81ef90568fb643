package httpserve_test

import (
	"log/slog"
	"os"
)

func osWriteFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
