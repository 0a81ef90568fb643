package testenv

import (
	"encoding/json"
	"testing"
)

func TestResultText(t *testing.T) {
	for _, tc := range []struct {
		name    string
		raw     string
		text    string
		isError bool
	}{
		{"one part", `{"content":[{"type":"text","text":"hi"}]}`, "hi", false},
		{"parts joined", `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, "ab", false},
		{"tool error", `{"content":[{"type":"text","text":"boom"}],"isError":true}`, "boom", true},
		{"only text parts", `{"content":[{"type":"resource_link","uri":"toolrag://r/1","name":"r"},{"type":"text","text":"preview"}]}`, "preview", false},
		{"no content", `{"content":[]}`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, isError := ResultText(t, json.RawMessage(tc.raw))
			if text != tc.text || isError != tc.isError {
				t.Errorf("ResultText = %q, %v; want %q, %v", text, isError, tc.text, tc.isError)
			}
		})
	}
}
