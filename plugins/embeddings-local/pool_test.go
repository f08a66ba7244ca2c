package main

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/sdk"
)

// goneEngine's workers after the first die at their first decode; the
// first starts once both have.
type goneEngine struct {
	wordEngine
	mu    sync.Mutex
	calls map[int]int
	both  sync.WaitGroup
}

func (g *goneEngine) embed(ctx context.Context, w int, seqs [][]int) ([][]float32, error) {
	g.mu.Lock()
	g.calls[w]++
	g.mu.Unlock()
	if w > 0 {
		g.both.Done()
		return nil, errWorkerGone
	}
	g.both.Wait()
	return g.wordEngine.embed(ctx, w, seqs)
}

// TestEmbedWorkersGone: decodes a gone worker handed back are done by the
// worker left, every text gets its vector, and the gone workers are not
// asked again in the same call.
func TestEmbedWorkersGone(t *testing.T) {
	g := &goneEngine{wordEngine: wordEngine{n: 8, size: 512, workerCount: 3}, calls: map[int]int{}}
	g.both.Add(2)
	p := &Provider{log: hclog.NewNullLogger(), state: sdk.StateReady, eng: g, nCtx: 512, opt: defaultOptions()}
	texts := []string{"one", "two words", "three more words", "four", "five", "six", "seven"}
	got, err := p.Embed(context.Background(), texts, sdk.KindDocument)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		want, _ := g.wordEngine.embed(context.Background(), 0, [][]int{mustTokens(t, g, texts[i])})
		unit(want[0])
		if len(v) != 8 || cos(v, want[0]) < 0.99999 {
			t.Errorf("text %d: %v, want %v", i, v, want[0])
		}
	}
	if g.calls[1] != 1 || g.calls[2] != 1 || g.calls[0] != len(texts) {
		t.Errorf("decodes per worker = %v: want each gone worker asked once, worker 0 every text", g.calls)
	}
	// A worker's real error fails the call.
	bad := &Provider{log: hclog.NewNullLogger(), state: sdk.StateReady, eng: &failEngine{wordEngine{n: 8, size: 512, workerCount: 2}}, nCtx: 512, opt: defaultOptions()}
	if _, err := bad.Embed(context.Background(), texts, sdk.KindDocument); err == nil {
		t.Error("a decode error was not returned")
	}
}

type failEngine struct{ wordEngine }

func (*failEngine) embed(context.Context, int, [][]int) ([][]float32, error) {
	return nil, errors.New("decode failed")
}

func mustTokens(t *testing.T, e engine, s string) []int {
	toks, err := e.tokenize(s)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}
