package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/memhost/memhost/sdk"
	"github.com/memhost/memhost/sdk/sdktest"
)

func TestConformanceInProcess(t *testing.T) {
	sdktest.Run(t, New(), sdktest.Options{})
}

// TestConformanceThroughPlugin builds this provider and runs the suite on
// it through go-plugin, as memhost runs it.
func TestConformanceThroughPlugin(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "memhost-embeddings-hello")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
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
