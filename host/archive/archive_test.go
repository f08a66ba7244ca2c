package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	home := t.TempDir()
	files := map[string]string{"notebook/a.md": "# A\n", "notebook/sub/b.md": "# B\n", "sessions/s.jsonl": `{"id":"1"}` + "\n",
		"sessions/.sources.jsonl": "{}\n", "notebook/.obsidian/x.json": "{}", "notebook/.memhost-tmp-1": "partial"}
	for p, text := range files {
		full := filepath.Join(home, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(text), 0o644)
	}
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("memory: {}\n"), 0o644)
	var buf bytes.Buffer
	m, err := Write(&buf, []Source{{"notebook", filepath.Join(home, "notebook")}, {"sessions", filepath.Join(home, "sessions")},
		{"config.yaml", filepath.Join(home, "config.yaml")}}, "test", time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 5 {
		t.Fatalf("%d files, want 5 (hidden and temporary files left out): %+v", len(m.Files), m.Files)
	}
	dir := t.TempDir()
	got, err := Read(bytes.NewReader(buf.Bytes()), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 5 {
		t.Fatalf("read %d files", len(got.Files))
	}
	for _, p := range []string{"notebook/a.md", "notebook/sub/b.md", "sessions/s.jsonl", "sessions/.sources.jsonl"} {
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || string(data) != files[p] {
			t.Fatalf("%s: %q %v", p, data, err)
		}
	}
}

// build makes an archive of entries with a manifest, then lets tamper
// change the manifest's files.
func build(t *testing.T, entries []tar.Header, bodies []string, tamper func(*Manifest)) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	m := Manifest{Format: Format, Version: Version}
	for i, h := range entries {
		h.Size = int64(len(bodies[i]))
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		h.Mode = 0o644
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(bodies[i]))
			sum := sha256.Sum256([]byte(bodies[i]))
			m.Files = append(m.Files, File{Path: h.Name, Size: h.Size, SHA256: hex.EncodeToString(sum[:])})
		}
	}
	if tamper != nil {
		tamper(&m)
	}
	data, _ := json.Marshal(m)
	tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg})
	tw.Write(data)
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func TestReadRefusesBadArchives(t *testing.T) {
	ok := []tar.Header{{Name: "notebook/a.md"}}
	for _, tc := range []struct {
		name    string
		entries []tar.Header
		bodies  []string
		tamper  func(*Manifest)
		want    string
	}{
		{"checksum", ok, []string{"# A\n"}, func(m *Manifest) { m.Files[0].SHA256 = strings.Repeat("0", 64) }, "does not match its checksum"},
		{"missing", ok, []string{"# A\n"}, func(m *Manifest) { m.Files = append(m.Files, File{Path: "notebook/b.md"}) }, "which is missing"},
		{"unlisted", ok, []string{"# A\n"}, func(m *Manifest) { m.Files = nil }, "is not in manifest.json"},
		{"dotdot", []tar.Header{{Name: "notebook/../../etc/x.md"}}, []string{"x"}, nil, "unsafe path"},
		{"absolute", []tar.Header{{Name: "/etc/passwd"}}, []string{"x"}, nil, "unsafe path"},
		{"outside", []tar.Header{{Name: "brain/memory.db"}}, []string{"x"}, nil, "not in notebook/ or sessions/"},
		{"symlink", []tar.Header{{Name: "notebook/l.md", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}, []string{""}, nil, "not a regular file"},
		{"twice", []tar.Header{{Name: "notebook/a.md"}, {Name: "notebook/a.md"}}, []string{"1", "2"}, nil, "twice"},
		{"version", ok, []string{"# A\n"}, func(m *Manifest) { m.Version = 99 }, "version 99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := build(t, tc.entries, tc.bodies, tc.tamper)
			_, err := Read(bytes.NewReader(data), t.TempDir())
			if !errors.Is(err, ErrBad) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Read(strings.NewReader("not gzip"), t.TempDir()); !errors.Is(err, ErrBad) {
		t.Fatalf("not gzip: %v", err)
	}
}
