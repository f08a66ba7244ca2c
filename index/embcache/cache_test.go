package embcache

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
)

func TestCache(t *testing.T) {
	ctx := context.Background()
	c, err := Open(ctx, filepath.Join(t.TempDir(), "embeddings.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Put(ctx, "m", map[string][]float32{"h1": {1, 2}, "h2": {3, 4}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, "m", []string{"h1", "h3"})
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got["h1"], []float32{1, 2}) {
		t.Errorf("Get = %v, %v", got, err)
	}
	if got, _ := c.Get(ctx, "other", []string{"h1"}); len(got) != 0 {
		t.Errorf("another model's vectors returned: %v", got)
	}
}
