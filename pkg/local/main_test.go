package local

import (
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// TestMain removes the binaries testenv.GoBinary built.
func TestMain(m *testing.M) { testenv.Main(m) }
