package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGiven(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string // "" writes no file
		env  map[string]string
		want bool
	}{
		{"no file", "", nil, false},
		{"commented template", Template, nil, false},
		{"other keys", "server:\n  tokenFile: t\n", nil, false},
		{"in the file", "server:\n  listen: 127.0.0.1:4321\n", nil, true},
		{"empty value in the file", "server:\n  listen: \"\"\n", nil, true},
		{"in the environment", "", map[string]string{"MEMHOST_SERVER_LISTEN": "127.0.0.1:9"}, true},
		{"bad yaml", "server: [\n", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			if tt.yaml != "" {
				if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			getenv := func(k string) string { return tt.env[k] }
			if got := Given(path, getenv, "server.listen"); got != tt.want {
				t.Fatalf("Given = %v, want %v", got, tt.want)
			}
		})
	}
}
