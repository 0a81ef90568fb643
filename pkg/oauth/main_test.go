package oauth

import (
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
