package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreFresh: the generated files on disk are what the
// table generates now (run go generate ./api after changing api/ops.go).
func TestGeneratedFilesAreFresh(t *testing.T) {
	dir := filepath.Join("..", "..")
	files, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("nothing generated")
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("api/%s: %v (run go generate ./api)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("api/%s is stale: run go generate ./api", name)
		}
	}
}

// TestGenerateRefusesABadTable: a table line the generator cannot read
// is an error naming it, not an operation left out.
func TestGenerateRefusesABadTable(t *testing.T) {
	for name, line := range map[string]string{
		"no method":            `OpX = Op[int, int]{OpInfo{Name: "x"}, nil, nil}`,
		"no name":              `OpX = Op[int, int]{OpInfo{Write: true}, API.X, nil}`,
		"duplicate name":       `OpX = Op[int, int]{OpInfo{Name: "x"}, API.X, nil}; OpY = Op[int, int]{OpInfo{Name: "x"}, API.Y, nil}`,
		"write without change": `OpX = Op[int, int]{OpInfo{Name: "x", Write: true}, API.X, nil}`,
		"two fields":           `OpX = Op[int, int]{OpInfo{Name: "x"}, API.X}`,
		"read with change":     `OpX = Op[int, int]{OpInfo{Name: "x"}, API.X, xChanged}`,
	} {
		dir := t.TempDir()
		src := "package api\n\nvar (\n\t" + line + "\n)\n"
		if err := os.WriteFile(filepath.Join(dir, "ops.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Generate(dir); err == nil {
			t.Errorf("%s: generated from %q", name, line)
		}
	}
}
