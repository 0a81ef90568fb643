package lambdahttp

import "testing"

func TestMemoryLimit(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want int64
		ok   bool
	}{
		{"outside Lambda", nil, 0, false},
		{"1024 MB function", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"}, 966367641, true},
		{"3008 MB function", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "3008"}, 2838704947, true},
		{"GOMEMLIMIT wins", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024", "GOMEMLIMIT": "700MiB"}, 0, false},
		{"garbage", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "lots"}, 0, false},
		{"zero", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "0"}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := memoryLimit(func(k string) string { return tc.env[k] })
			if got != tc.want || ok != tc.ok {
				t.Fatalf("memoryLimit = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
