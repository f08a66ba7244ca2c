// Package testbin builds the binaries tests run (plugins, commands) once
// per test process, and keeps them between processes: a binary is cached
// under os.TempDir()/memhost-testbin, keyed by a hash of every source file
// of our module it is built from, the versions of the modules it uses, the
// Go version, the build tags and the cgo flags. A later `go test` with the
// same sources runs the cached binary without building.
//
// Test processes may build at once: each builds into a temporary file in
// the cache folder and renames it into place (internal/fsx), so a binary
// is never seen half written, and identical builds replace each other.
package testbin

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/memhost/memhost/internal/fsx"
)

// Dir is the cache folder's name under os.TempDir().
const Dir = "memhost-testbin"

type built struct {
	once sync.Once
	path string
	err  error
}

// builds holds this process's builds by package and tags.
var builds sync.Map // string -> *built

// Build returns the path of pkg's binary, built with tags (comma
// separated, "" for none). pkg is an import path of our module, or a
// package's folder (relative to the test's working folder), which may be
// a module of its own (plugins/embeddings-local): the go commands run in
// it. The binary is shared: run it or copy it (Install), never change it.
func Build(pkg, tags string) (string, error) { return BuildEnv(pkg, tags, nil) }

// BuildEnv is Build with env (KEY=value) added to the build's
// environment, as CGO_ENABLED=0 for the static launcher.
func BuildEnv(pkg, tags string, env []string) (string, error) {
	abs := pkg
	if strings.HasPrefix(pkg, ".") {
		var err error
		if abs, err = filepath.Abs(pkg); err != nil {
			return "", err
		}
	}
	v, _ := builds.LoadOrStore(abs+"\x00"+tags+"\x00"+strings.Join(env, "\x00"), &built{})
	b := v.(*built)
	b.once.Do(func() { b.path, b.err = build(abs, tags, env) })
	return b.path, b.err
}

// Path is Build that fails t on an error.
func Path(t testing.TB, pkg, tags string) string {
	t.Helper()
	p, err := Build(pkg, tags)
	if err != nil {
		t.Fatalf("building %s: %v", pkg, err)
	}
	return p
}

// Install copies pkg's binary to dst (mode 0755), for a test that puts it
// in a plugin folder or may change it.
func Install(t testing.TB, pkg, tags, dst string) {
	t.Helper()
	if err := Copy(Path(t, pkg, tags), dst); err != nil {
		t.Fatal(err)
	}
}

// Copy copies the binary at src to dst, mode 0755.
func Copy(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return out.Close()
}

// goCmd is the go command with args, run in pkg's folder when pkg is
// one, with the package then named ".".
func goCmd(pkg string, env []string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if strings.HasPrefix(pkg, ".") || filepath.IsAbs(pkg) {
		cmd = exec.Command("go", append(args, ".")...)
		cmd.Dir = pkg
	} else {
		cmd = exec.Command("go", append(args, pkg)...)
	}
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return cmd
}

// build finds or makes pkg's binary in the cache.
func build(pkg, tags string, env []string) (string, error) {
	importPath, key, err := sourceKey(pkg, tags, env)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(os.TempDir(), Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := path.Base(importPath)
	bin := filepath.Join(dir, name+"-"+key[:20])
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	tmp, err := os.CreateTemp(dir, "."+name+"-*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // after the rename: nothing there
	args := []string{"build", "-o", tmp.Name()}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	if out, err := goCmd(pkg, env, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	f, err := os.Open(tmp.Name())
	if err != nil {
		return "", err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return "", err
	}
	if err := fsx.Rename(tmp.Name(), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// listFormat prints, for each package pkg depends on (itself included):
// for ours (the main module's, or a module replaced by a local folder),
// its source files; for another module's, the module's version.
const listFormat = `{{if .Module}}{{if or .Module.Main (and .Module.Replace (not .Module.Replace.Version))}}{{$d := .Dir}}` +
	`{{range .GoFiles}}F {{$d}}/{{.}}{{"\n"}}{{end}}` +
	`{{range .CgoFiles}}F {{$d}}/{{.}}{{"\n"}}{{end}}` +
	`{{range .CFiles}}F {{$d}}/{{.}}{{"\n"}}{{end}}` +
	`{{range .HFiles}}F {{$d}}/{{.}}{{"\n"}}{{end}}` +
	`{{range .EmbedFiles}}F {{$d}}/{{.}}{{"\n"}}{{end}}` +
	`{{else}}M {{.Module.Path}} {{.Module.Version}}{{if .Module.Replace}} => {{.Module.Replace.Path}} {{.Module.Replace.Version}}{{end}}{{"\n"}}{{end}}{{end}}` +
	`P {{.ImportPath}}{{"\n"}}`

// sourceKey is pkg's import path and the hash its cached binary is kept
// under.
func sourceKey(pkg, tags string, env []string) (importPath, key string, err error) {
	args := []string{"list", "-deps", "-f", listFormat}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := goCmd(pkg, env, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("go list %s: %v\n%s", pkg, err, stderr.String())
	}
	h := sha256.New()
	fmt.Fprintf(h, "go %s %s/%s tags %q cgo %q %q env %q\n", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		tags, os.Getenv("CGO_CFLAGS"), os.Getenv("CGO_LDFLAGS"), env)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		h.Write([]byte(line + "\n"))
		switch {
		case strings.HasPrefix(line, "P "):
			importPath = strings.TrimPrefix(line, "P ") // the last is pkg itself
		case strings.HasPrefix(line, "F "):
			b, err := os.ReadFile(strings.TrimPrefix(line, "F "))
			if err != nil {
				return "", "", err
			}
			s := sha256.Sum256(b)
			h.Write(s[:])
		}
	}
	if importPath == "" {
		return "", "", fmt.Errorf("go list %s: no package", pkg)
	}
	return importPath, hex.EncodeToString(h.Sum(nil)), nil
}
