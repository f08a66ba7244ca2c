package secrets

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
)

// prose returns about n bytes of notebook-like text: sentences, some
// with the words secret rules key on (key, token, password, api, auth),
// headings, code, URLs, and a secret every ~64 KB. Its content depends on
// nothing but n.
func prose(n int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the a notebook meeting agent memory page recall index
		we should move it to Thursday because the build failed again and nobody
		knows why deploy server client request write read sync merge branch
		key token password api auth access secret config value note idea plan
		review the summary of yesterday's session was useful for the next step`)
	lines := []string{
		"## Notes from the session",
		"See [[Project Atlas]] and [[Runbook#Rotation]] for context.",
		"```go\nfunc (s *Server) Handle(w http.ResponseWriter, r *http.Request) {\n\tkey := r.URL.Query().Get(\"key\")\n}\n```",
		"Docs: https://example.com/docs/getting-started?lang=en#install",
		"commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the api timeout",
		"- [ ] rotate the access token config before Friday",
		"request id 123e4567-e89b-12d3-a456-426614174000 retried",
	}
	secretsEvery := 64 << 10
	var b strings.Builder
	next := secretsEvery
	for b.Len() < n {
		if rng.IntN(4) == 0 {
			b.WriteString(lines[rng.IntN(len(lines))])
		} else {
			for i, w := 0, 8+rng.IntN(16); i < w; i++ {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[rng.IntN(len(words))])
			}
			b.WriteByte('.')
		}
		b.WriteByte('\n')
		if b.Len() >= next {
			b.WriteString("token: " + samples[rng.IntN(len(samples))].secret + "\n")
			next += secretsEvery
		}
	}
	return b.String()
}

// turn is a typical ~500-byte chat turn.
const turn = `I looked at the failing deploy. The server logs show the api client
timing out after 30 seconds when it syncs the notebook index, so the retry
journal replays the write and the page ends up with two copies of the same
section. I think we should make the write idempotent with the request id
(see [[Retry journal]]) and add a test that kills the server mid-write.
Could you check whether the auth middleware also re-runs on retry? The
config key for the timeout is sync.timeout and defaults to 30s.`

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScan(b *testing.B) {
	s := scanner(b)
	text := prose(1 << 20)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		s.Scan(text)
	}
}

func BenchmarkScanTurn(b *testing.B) {
	s := scanner(b)
	b.SetBytes(int64(len(turn)))
	b.ReportAllocs()
	for b.Loop() {
		s.Scan(turn)
	}
}

func BenchmarkRedactTurn(b *testing.B) {
	s := scanner(b)
	text := turn + "\ntoken: " + githubPAT + "\n"
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		s.Redact(text)
	}
}

// TestProseHasOnlyItsSecrets checks the benchmark's text: it finds the
// secrets put in, and nothing in the prose around them.
func TestProseHasOnlyItsSecrets(t *testing.T) {
	s := scanner(t)
	text := prose(256 << 10)
	fs := s.Scan(text)
	if want := strings.Count(text, "token: "); len(fs) != want {
		for _, f := range fs {
			t.Logf("%s at line %d: %.40q", f.Rule, f.Line, text[f.Start:f.End])
		}
		t.Fatalf("Scan(prose) found %d, want %d", len(fs), want)
	}
}

// TestNewCost logs what New costs, for doc.go.
func TestNewCost(t *testing.T) {
	if testing.Short() {
		t.Skip("measures New")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	s, err := New()
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("New: %v, %d MB allocated, %d MB live after GC (%d rules)", took, allocated>>20, (int64(after.HeapAlloc)-int64(before.HeapAlloc))>>20, len(s.d.Config.Rules))
	runtime.KeepAlive(s)
}
