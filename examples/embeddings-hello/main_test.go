package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/memhost/memhost/internal/testbin"
	"github.com/memhost/memhost/sdk"
	"github.com/memhost/memhost/sdk/sdktest"
)

func TestConformanceInProcess(t *testing.T) {
	sdktest.Run(t, New(), sdktest.Options{})
}

// TestConformanceThroughPlugin builds this provider and runs the suite on
// it through go-plugin, as memhost runs it.
func TestConformanceThroughPlugin(t *testing.T) {
	bin := testbin.Path(t, ".", "")
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		Plugins:          sdk.PluginMap(nil),
		Cmd:              exec.Command(bin),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
	})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rpc.Dispense(sdk.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	e := raw.(sdk.Embedder)
	sdktest.Run(t, e, sdktest.Options{Configure: map[string]string{"dimensions": "64"}})
	if err := e.Configure(context.Background(), map[string]string{"colour": "blue"}); err == nil {
		t.Error("Configure with an unknown option succeeded")
	}
}

func TestSimilarTextsAreClose(t *testing.T) {
	e := New()
	v, _ := e.Embed(context.Background(), []string{"Sarah Chen phone 555-1234", "what is sarah's phone", "the weather in Paris"}, sdk.KindDocument)
	dot := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	if near, far := dot(v[0], v[1]), dot(v[0], v[2]); near <= far {
		t.Errorf("cos(sarah, sarah) = %v <= cos(sarah, paris) = %v", near, far)
	}
}

// BenchmarkEmbed compares embedding batches of 32 ~100-token texts
// in-process with the same provider through its plugin process.
func BenchmarkEmbed(b *testing.B) {
	texts := make([]string, 32)
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("memory notebook chunk %d about search and sync ", i), 10)
	}
	ctx := context.Background()
	run := func(b *testing.B, e sdk.Embedder) {
		e.Configure(ctx, map[string]string{"dimensions": "384"})
		b.ResetTimer()
		for range b.N {
			if _, err := e.Embed(ctx, texts, sdk.KindDocument); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "texts/s")
	}
	b.Run("in-process", func(b *testing.B) { run(b, New()) })
	b.Run("plugin", func(b *testing.B) {
		bin := testbin.Path(b, ".", "")
		client := plugin.NewClient(&plugin.ClientConfig{
			HandshakeConfig: sdk.Handshake, Plugins: sdk.PluginMap(nil), Cmd: exec.Command(bin),
			AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC}, AutoMTLS: true, Logger: hclog.NewNullLogger(),
		})
		defer client.Kill()
		rpc, err := client.Client()
		if err != nil {
			b.Fatal(err)
		}
		raw, err := rpc.Dispense(sdk.PluginName)
		if err != nil {
			b.Fatal(err)
		}
		run(b, raw.(sdk.Embedder))
	})
}
