package pagehtml

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"
)

// threadCPU runs fn on one locked OS thread and returns the CPU time that
// thread spent: the work fn did, whatever else the machine runs (a busy
// machine makes it wait, which this does not count).
func threadCPU(t testing.TB, fn func()) time.Duration {
	t.Helper()
	done := make(chan time.Duration)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var a, b syscall.Rusage
		const rusageThread = 1 // RUSAGE_THREAD, Linux
		if err := syscall.Getrusage(rusageThread, &a); err != nil {
			t.Error(err)
		}
		fn()
		syscall.Getrusage(rusageThread, &b)
		done <- time.Duration(b.Utime.Nano()+b.Stime.Nano()-a.Utime.Nano()-a.Stime.Nano()) * time.Nanosecond
	}()
	return <-done
}

// pathological are inputs on which a renderer can be super-linear: each
// of them was, in goldmark or this package, before rendering was bounded.
var pathological = []string{
	"[a](",      // each link attempt read the rest of the line
	"![a](",     // images: the same
	"[a](<",     // a <destination>: the same
	"[a](x\n(",  // a (title) on the next line
	"[a]\n",     // a reference looked up: its line searched from the end
	"*a_",       // emphasis matched pairwise
	"[[a",       // wikilinks: "]]" looked for to the end of the line
	"[k:: ",     // inline fields: the closing bracket, the same
	"(k:: ",     //
	"[a](b (c(", // a (title) with a '(' in it
}

// TestRenderLinear: rendering each pathological input of 4N bytes costs
// about 4 times N's CPU, not 16 (quadratic). The CPU time is the
// rendering thread's, the least of five runs, with the garbage collector
// off during each (its assists charge the thread for the heap, not for
// the input: under a loaded suite one run of 64 KiB cost 8 ms and of
// 256 KiB 90): a loose factor (10) on counted work, not a wall-clock
// threshold. N is 256 KiB: at 64 KiB the small input's best run took 1-4
// ms, near the clock's grain, and one lucky 1.45 ms made a ratio of 13.
func TestRenderLinear(t *testing.T) {
	if raceDetector {
		// A ratio of CPU times under -race measures the detector, and a
		// mebibyte of input five times over took more than ten minutes
		// beside a busy core. make test runs this test without -race on
		// its own, after the -race pass.
		t.Skip("a CPU-time ratio under -race measures the race detector")
	}
	if testing.Short() {
		// Rendering reads no clock: the -short runs on other days need
		// not measure it (make test runs it once, without -race).
		t.Skip("-short: a minute of CPU that no date changes")
	}
	md := NewMarkdown(nil)
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	cost := func(src []byte) time.Duration {
		best := time.Duration(1<<63 - 1)
		for range 5 {
			runtime.GC()
			d := threadCPU(t, func() {
				if _, err := RenderBlocks(context.Background(), md, nil, src); err != nil {
					t.Error(err)
				}
			})
			best = min(best, d)
		}
		return max(best, time.Millisecond) // below the clock's grain, a ratio means nothing
	}
	const n = 256 << 10
	for _, p := range pathological {
		small := cost([]byte(strings.Repeat(p, n/len(p))))
		large := cost([]byte(strings.Repeat(p, 4*n/len(p))))
		if r := float64(large) / float64(small); r > 10 {
			t.Errorf("%q: %d KiB took %s of CPU, %d KiB %s: %.0f times as much (quadratic is 16)", p, n>>10, small, 4*n>>10, large, r)
		} else {
			t.Logf("%q: %s, %s (×%.1f)", p, small, large, r)
		}
	}
}

// TestRender400KB: the page of the report, 400 KB of "[a](" (56 s of CPU
// per view before), renders as markdown in well under 20 s of CPU.
func TestRender400KB(t *testing.T) {
	md := NewMarkdown(nil)
	src := []byte(strings.Repeat("[a](", 100_000))
	var (
		blocks []Block
		err    error
	)
	cpu := threadCPU(t, func() { blocks, err = RenderBlocks(context.Background(), md, nil, src) })
	if err != nil || len(blocks) != 1 || !strings.Contains(string(blocks[0].HTML), "[a](") {
		t.Fatalf("400 KB of [a](: %v, %d blocks", err, len(blocks))
	}
	if cpu > 20*time.Second {
		t.Errorf("400 KB of [a]( took %s of CPU", cpu)
	}
	t.Logf("400 KB of [a](: %s of CPU", cpu)
}

// BenchmarkRenderPathological renders 400 KB of each pathological input.
func BenchmarkRenderPathological(b *testing.B) {
	md := NewMarkdown(nil)
	for _, p := range pathological {
		src := []byte(strings.Repeat(p, 400_000/len(p)))
		b.Run(strings.ReplaceAll(p, "\n", `\n`), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				RenderBlocks(context.Background(), md, nil, src)
			}
		})
	}
}

// TestRenderCanceled: a rendering stops when its context ends, even on
// input goldmark still takes minutes over (blocks nested 500,000 deep,
// 1 MiB of "> " or "1. "): the client that left costs no more CPU. The
// bound (60 s) only catches a rendering that does not stop.
func TestRenderCanceled(t *testing.T) {
	md := NewMarkdown(nil)
	for _, p := range []string{"> ", "1. "} {
		src := []byte(strings.Repeat(p, MaxRenderBytes/len(p)))
		for _, f := range []struct {
			name   string
			render func(context.Context) error
		}{
			{"blocks", func(ctx context.Context) error { _, err := RenderBlocks(ctx, md, nil, src); return err }},
			{"html", func(ctx context.Context) error { _, err := RenderHTML(ctx, md, nil, src); return err }},
		} {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- f.render(ctx) }()
			// Once it runs: the rendering takes minutes, so it is under
			// way then whatever the machine's load.
			time.AfterFunc(100*time.Millisecond, cancel)
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("%q (%s), cancelled: %v", p, f.name, err)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("%q (%s): the rendering went on after its context was cancelled", p, f.name)
			}
		}
	}
}

// TestBoundedLinks: bounding links changes nothing CommonMark accepts as
// a link; what it refuses is text, or a shortcut reference.
func TestBoundedLinks(t *testing.T) {
	md := NewMarkdown(nil)
	deep := strings.Repeat("(", maxLinkParens+1) + "b" + strings.Repeat(")", maxLinkParens+1)
	for _, c := range []struct{ src, want string }{
		{"[a](b)", `<a href="b">a</a>`},
		{"[a](<b c>)", `<a href="b%20c">a</a>`},
		{`[a](b "t")`, `<a href="b" title="t">a</a>`},
		{"[a](b (t))", `<a href="b" title="t">a</a>`},
		{"[a](b\n(t))", `<a href="b" title="t">a</a>`},
		{"[a](((b)))", `<a href="((b))">a</a>`},
		{"![i](p.png)", `<img src="p.png" alt="i">`},
		{"[a](b (t(u)))", `[a](b (t(u)))`},
		{"[a](<b<c)", `[a](&lt;b&lt;c)`},
		{"[a](" + deep + ")", "[a](" + deep + ")"},
		{"[a]: /u\n\n[a](<b<c)", `<a href="/u">a</a>(&lt;b&lt;c)`},
		{"[[Page]] and [[a[b]]", `<a class="wikilink missing" href="/ui/notebook?new=page.md">Page</a> and [[a[b]]`},
	} {
		got, err := RenderHTML(context.Background(), md, nil, []byte(c.src))
		if err != nil || !strings.Contains(got, c.want) {
			t.Errorf("%q: got %q, want it to hold %q (%v)", c.src, got, c.want, err)
		}
	}
}
