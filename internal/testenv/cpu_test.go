package testenv

import (
	"testing"
	"time"
)

func TestProcessCPU(t *testing.T) {
	before := ProcessCPU()
	if before <= 0 {
		t.Fatalf("ProcessCPU() = %s at start, want > 0", before)
	}
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
	}
	if spent := ProcessCPU() - before; spent < 5*time.Millisecond {
		t.Errorf("20 ms of busy work counted as %s of CPU", spent)
	}
}
