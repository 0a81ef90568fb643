package app

import (
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// find_tools and /tool-rag/retrieve with several queries go through the
// App's retrieval wrapper: it must keep the retriever's one-pass search
// (retrieve.RetrieveGroups asks any other Searcher once per query).
func TestRetrievalSearchesGroupsInOnePass(t *testing.T) {
	var s retrieve.Searcher = retrieval{}
	if _, ok := s.(retrieve.GroupSearcher); !ok {
		t.Fatal("the App's retrieval wrapper is not a retrieve.GroupSearcher: several queries are searched one by one")
	}
}
