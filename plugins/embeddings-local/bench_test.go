package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/memhost/memhost/sdk"
)

// chunks returns n different texts of about 100 tokens.
func chunks(n int) []string {
	words := strings.Fields("the notebook keeps what the agent learns about people projects and plans so that a later session can search it by meaning and by keyword without a network connection or any service to run")
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for j := 0; j < 80; j++ {
			b.WriteString(words[(i*7+j*3)%len(words)])
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "chunk %d.", i)
		out[i] = b.String()
	}
	return out
}

func benchEmbed(b *testing.B, e sdk.Embedder, batch int) {
	benchTexts(b, e, batch, chunks(32))
}

func benchTexts(b *testing.B, e sdk.Embedder, batch int, texts []string) {
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		for i := 0; i < len(texts); i += batch {
			if _, err := e.Embed(ctx, texts[i:i+batch], sdk.KindDocument); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkEmbed embeds 32 ~100-token chunks per op: in one call of 32 or
// one by one, in this process or through the plugin process.
func BenchmarkEmbed(b *testing.B) {
	model := testModel(b)
	b.Run("in-process/batch-32", func(b *testing.B) { benchEmbed(b, loaded(b, nil), 32) })
	b.Run("in-process/one-by-one", func(b *testing.B) { benchEmbed(b, loaded(b, nil), 1) })
	short := make([]string, 32)
	for i := range short {
		short[i] = fmt.Sprintf("what is the phone number of contact %d?", i)
	}
	for _, pack := range []int{0, 128, 256, 512} {
		opts := map[string]string{}
		if pack > 0 {
			opts["packTokens"] = fmt.Sprint(pack)
		}
		b.Run(fmt.Sprintf("in-process/pack-%d/chunks", pack), func(b *testing.B) { benchEmbed(b, loaded(b, opts), 32) })
		b.Run(fmt.Sprintf("in-process/pack-%d/short", pack), func(b *testing.B) { benchTexts(b, loaded(b, opts), 32, short) })
	}

	bin := filepath.Join(b.TempDir(), "memhost-embeddings-local")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}
	var client *plugin.Client
	var e sdk.Embedder
	b.Run("cold-start-to-first-embedding", func(b *testing.B) {
		for range b.N {
			if client != nil {
				client.Kill()
			}
			client = nil
			start := time.Now()
			client = plugin.NewClient(&plugin.ClientConfig{HandshakeConfig: sdk.Handshake, Plugins: sdk.PluginMap(nil),
				Cmd: exec.Command(bin), AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC}, AutoMTLS: true, Logger: hclog.NewNullLogger()})
			rpc, err := client.Client()
			if err != nil {
				b.Fatal(err)
			}
			raw, _ := rpc.Dispense(sdk.PluginName)
			e = raw.(sdk.Embedder)
			if err := e.Configure(context.Background(), map[string]string{"model": model}); err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := e.Embed(context.Background(), []string{"first"}, sdk.KindQuery); err == nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms")
		}
	})
	if client == nil {
		return // cold start was filtered out
	}
	defer client.Kill()
	b.Run("plugin/batch-32", func(b *testing.B) { benchEmbed(b, e, 32) })
	b.Run("plugin/one-by-one", func(b *testing.B) { benchEmbed(b, e, 1) })
	b.Run("plugin-peak-rss", func(b *testing.B) {
		pid := client.ReattachConfig().Pid
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			b.Skip(err)
		}
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "VmHWM:") {
				kb, _ := strconv.Atoi(strings.Fields(l)[1])
				b.ReportMetric(float64(kb)/1024, "peak-MB")
			}
		}
	})
}
