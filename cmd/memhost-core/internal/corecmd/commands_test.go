package corecmd

import (
	"testing"

	"github.com/memhost/memhost/host/providers"
)

// TestProviderLine: a provider whose dimensions are not known yet (its
// model downloading) is shown without a figure.
func TestProviderLine(t *testing.T) {
	for _, c := range []struct {
		resp providers.UseResponse
		want string
	}{
		{providers.UseResponse{Plugin: "local", Model: "m", Dimensions: 384, Status: "loading"}, "embeddings provider: local (model m, 384 dimensions, loading)"},
		{providers.UseResponse{Plugin: "local", Model: "m", Status: "downloading"}, "embeddings provider: local (model m, downloading)"},
	} {
		if got := providerLine(c.resp); got != c.want {
			t.Errorf("providerLine(%+v) = %q, want %q", c.resp, got, c.want)
		}
	}
}
