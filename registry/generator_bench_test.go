package registry

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memhost/memhost/internal/fakeopenai"
	"github.com/memhost/memhost/sdk"
)

// BenchmarkGeneratorComplete is one Complete through go-plugin and the
// real memhost-generator-openai against a local fake endpoint that answers
// at once: the cost memhost adds to a model's own time (plugin boundary,
// HTTP to the endpoint, answer checks).
func BenchmarkGeneratorComplete(b *testing.B) {
	srv := fakeopenai.New("", "m")
	defer srv.Close()
	dir := b.TempDir()
	copyFile(b, binary(b, GeneratorPrefix+"openai"), filepath.Join(dir, GeneratorPrefix+"openai"))
	r := New(Options{Kind: Generators, Dirs: []string{dir}})
	defer r.Close()
	ctx := context.Background()
	g, release, err := r.Generator(ctx, "openai", map[string]string{"url": srv.Base(), "model": "m"})
	defer release()
	if err != nil {
		b.Fatal(err)
	}
	req := sdk.CompleteRequest{Messages: []sdk.Message{{Role: "user", Content: "hello"}}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := g.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
