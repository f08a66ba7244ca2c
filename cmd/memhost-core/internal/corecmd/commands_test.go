package corecmd

import (
	"testing"

	mh "github.com/memhost/memhost"
)

// TestProviderLine: a provider whose dimensions are not known yet (its
// model downloading) is shown without a figure.
func TestProviderLine(t *testing.T) {
	for _, c := range []struct {
		resp mh.UseResponse
		want string
	}{
		{mh.UseResponse{Plugin: "local", Model: "m", Dimensions: 384, Status: "loading"}, "embeddings provider: local (model m, 384 dimensions, loading)"},
		{mh.UseResponse{Plugin: "local", Model: "m", Status: "downloading"}, "embeddings provider: local (model m, downloading)"},
	} {
		if got := providerLine(c.resp); got != c.want {
			t.Errorf("providerLine(%+v) = %q, want %q", c.resp, got, c.want)
		}
	}
}
