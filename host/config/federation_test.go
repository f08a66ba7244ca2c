package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFederationKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yaml, want string }{
		{"federation:\n  remote: /srv/memory.git\n  branch: work/laptop\n  pushIntervalSec: 5\n  author: A <a@b>\n", ""},
		{"federation:\n  remotes: x\n", "federation.remotes: unknown key"},
		{"federation:\n  Remote: x\n", "did you mean remote?"},
		{"federation:\n  branch: \"a b\"\n", "federation.branch: not a valid git branch name"},
		{"federation:\n  branch: a..b\n", "federation.branch"},
		{"federation:\n  branch: \"\"\n", "federation.branch"},
		{"federation:\n  pushIntervalSec: 0\n", "federation.pushIntervalSec: must be between 1 and 86400, got 0"},
		{"federation:\n  pushIntervalSec: soon\n", "federation.pushIntervalSec: expected an integer"},
		{"federation:\n  commitIntervalMs: -1\n", "federation.commitIntervalMs"},
		{"federation:\n  remote: --upload-pack=evil\n", "federation.remote: not a repository URL or path"},
		{"federation:\n  author: \"A <a@b\"\n", "federation.author"},
	} {
		path := filepath.Join(t.TempDir(), FileName)
		os.WriteFile(path, []byte(tc.yaml), 0o644)
		cfg, err := Load(path, nil)
		if tc.want == "" {
			if err != nil || cfg.Federation.Remote != "/srv/memory.git" || cfg.Federation.PushIntervalSec != 5 {
				t.Errorf("%q: got %+v, %v", tc.yaml, cfg.Federation, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func TestSetFederationKeepsTheFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	os.WriteFile(path, []byte("# mine\nmemory:\n  search:\n    maxResults: 7 # seven\n"), 0o644)
	if err := SetFederation(path, "/srv/memory.git", "main"); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Federation.Remote != "/srv/memory.git" || cfg.Memory.Search.MaxResults != 7 {
		t.Fatalf("got %+v", cfg)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "# seven") {
		t.Fatalf("comment lost:\n%s", data)
	}
	if err := SetFederation(path, "-x", ""); err == nil {
		t.Fatal("a remote starting with - was written")
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Fatal("a refused change touched the file")
	}
}
