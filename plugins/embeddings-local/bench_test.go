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
	tokens := 0
	if p, ok := e.(*Provider); ok {
		for _, t := range texts {
			toks, _ := p.eng.tokenize(t)
			tokens += len(toks)
		}
	}
	cpu0 := treeCPU(b)
	b.ResetTimer()
	for range b.N {
		for i := 0; i < len(texts); i += batch {
			if _, err := e.Embed(ctx, texts[i:i+batch], sdk.KindDocument); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "chunks/s")
	if tokens > 0 {
		b.ReportMetric(float64(b.N*tokens)/b.Elapsed().Seconds(), "tokens/s")
		b.ReportMetric(float64(b.N*tokens)/(treeCPU(b)-cpu0).Seconds(), "tokens/cpu-s")
	}
}

// treeCPU is the CPU time (user + system) of this process and of its
// children still running (the provider's worker processes), from /proc.
func treeCPU(b *testing.B) time.Duration {
	var total time.Duration
	self := strconv.Itoa(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime stime: fields 14 and 15,
		// counted after the command's closing parenthesis.
		f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
		if len(f) < 13 || (filepath.Base(filepath.Dir(path)) != self && f[1] != self) {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
	}
	if total == 0 {
		b.Skip("no /proc to read CPU time from")
	}
	return total
}

// BenchmarkEmbed embeds 32 ~100-token chunks per op: in one call of 32 or
// one by one, in this process or through the plugin process.
func BenchmarkEmbed(b *testing.B) {
	model := testModel(b)
	b.Run("in-process/batch-32", func(b *testing.B) { benchEmbed(b, loaded(b, nil), 32) })
	// The model as it was quantised (bf16=false, repack.go), and on one
	// worker (threads=1, engine.go): what each of the two adds.
	b.Run("in-process/batch-32/as-quantised", func(b *testing.B) { benchEmbed(b, loaded(b, map[string]string{"bf16": "false"}), 32) })
	b.Run("in-process/batch-32/one-worker", func(b *testing.B) { benchEmbed(b, loaded(b, map[string]string{"threads": "1"}), 32) })
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

	// The plugin's models folder (where its BF16 copy is kept) is the
	// benchmark's own; its cold starts after the first find the copy.
	b.Setenv("MEMHOST_MODELS_DIR", b.TempDir())
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
			if err := e.Configure(context.Background(), map[string]string{"model": model, "bf16": strconv.FormatBool(os.Getenv("BENCH_BF16") != "false")}); err != nil {
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
