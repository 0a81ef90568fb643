package retrieve

import (
	"reflect"
	"sort"
	"testing"
)

func TestStem(t *testing.T) {
	tests := map[string]string{
		"searching": "search", "searches": "search", "searched": "search",
		"files": "file", "caresses": "caress", "ponies": "poni", "agreed": "agre",
		"hopping": "hop", "filing": "file", "happy": "happi", "relational": "relat",
		"conditional": "condit", "generalization": "gener", "electrical": "electr",
		"adjustment": "adjust", "replacement": "replac", "running": "run",
		"weather": "weather", "forecast": "forecast", "translate": "translat",
		"translation": "translat", "directions": "direct", "go": "go", "v2": "v2",
	}
	for in, want := range tests {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"getWeatherForecast", []string{"get", "weather", "forecast"}},
		{"Please send the emails to Bob!", []string{"send", "email", "bob"}},
		{"list-directory_v2", []string{"list", "directori", "v2"}},
		{"path to 12306 a 1", []string{"path", "12306", "1"}},
		{"八字命理", []string{"八字", "字命", "命理"}},
		{"查询mcp服务", []string{"查询", "mcp", "服务"}},
		{"字", []string{"字"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := Terms(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDecompose(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"get the weather", nil},
		{"Check the forecast for Oslo and then create a calendar event",
			[]string{"Check the forecast for Oslo", "create a calendar event"}},
		{"Fetch the stock prices, then write a report; email it to Ana",
			[]string{"Fetch the stock prices", "write a report", "email it to Ana"}},
		{"1. download the file 2. convert it to pdf 3. upload the pdf",
			[]string{"download the file", "convert it to pdf", "upload the pdf"}},
		{"Find cheap flights to Rome. Book a hotel near the Colosseum!",
			[]string{"Find cheap flights to Rome", "Book a hotel near the Colosseum"}},
		{"Read it. Then go.", nil}, // steps with fewer than two content words are dropped
	}
	for _, tt := range tests {
		if got := Decompose(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Decompose(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSelectTop(t *testing.T) {
	for n := 0; n < 60; n++ {
		for _, k := range []int{0, 1, 3, n / 2, n - 1, n, n + 5} {
			xs := make([]int, n)
			for i := range xs {
				xs[i] = (i*7919 + 13) % 31 // with duplicates
			}
			want := append([]int(nil), xs...)
			sort.Sort(sort.Reverse(sort.IntSlice(want)))
			selectTop(xs, k, func(a, b int) bool { return a > b })
			if k <= 0 || k >= n {
				continue
			}
			got := append([]int(nil), xs[:k]...)
			sort.Sort(sort.Reverse(sort.IntSlice(got)))
			if !reflect.DeepEqual(got, want[:k]) {
				t.Fatalf("n=%d k=%d: top %v, want %v", n, k, got, want[:k])
			}
		}
	}
}
