package episodes

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/sessions"
)

var update = flag.Bool("update", false, "rewrite testdata/golden")

// fakeKernel is a home of real files: the transcripts of testdata copied
// into a temporary sessions folder, and a notebook beside them.
type fakeKernel struct {
	store   *sessions.Store
	nb      *notebook.Notebook
	cfg     config.Config
	loc     *time.Location
	now     time.Time
	mu      sync.Mutex // guards changes and indexed
	changes []memhost.Change
	indexed []string
}

func (k *fakeKernel) Sessions() *sessions.Store    { return k.store }
func (k *fakeKernel) Notebook() *notebook.Notebook { return k.nb }
func (k *fakeKernel) Config() *config.Config       { return &k.cfg }
func (k *fakeKernel) Location() *time.Location     { return k.loc }
func (k *fakeKernel) Now() time.Time               { return k.now }
func (k *fakeKernel) IndexWritten(_ context.Context, rels ...string) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.indexed = append(k.indexed, rels...)
	return nil
}
func (k *fakeKernel) Log() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Publish records what the host would publish: the op's Change, after
// a success that changed something.
func (k *fakeKernel) Publish(op api.Operation, req, resp any, err error) {
	c, ok := op.Changed(req, resp)
	if !ok || err != nil || len(c.Paths) == 0 {
		return
	}
	c.Op = op.Info().Name
	k.mu.Lock()
	defer k.mu.Unlock()
	k.changes = append(k.changes, c)
}

// runEpisodes runs the Episodes operation as the host's chain does:
// then publishes what it changed.
func runEpisodes(es *EpisodeService, ctx context.Context, req memhost.EpisodesRequest) (memhost.EpisodesResponse, error) {
	resp, err := es.Episodes(ctx, req)
	es.k.Publish(api.OpEpisodes, req, resp, err)
	return resp, err
}

// newHome copies testdata/sessions into a new home; times in zone.
func newHome(t testing.TB, zone string) (*EpisodeService, *fakeKernel) {
	t.Helper()
	home := t.TempDir()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/sessions/*.jsonl")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nb, err := notebook.Open(filepath.Join(home, "notebook"), filepath.Join(home, "notebook.lock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nb.Close() })
	now := time.Date(2026, 2, 13, 18, 0, 0, 0, loc)
	k := &fakeKernel{store: &sessions.Store{Dir: dir, Now: func() time.Time { return now }}, nb: nb, cfg: config.Default(), loc: loc, now: now}
	return New(k, 0), k
}

func (k *fakeKernel) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := k.nb.Read(rel)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func states(r memhost.EpisodesResponse) string {
	var out []string
	for _, d := range r.Days {
		out = append(out, d.Date+" "+d.State)
	}
	return strings.Join(out, ", ")
}

// TestEpisodesGolden: the page of a day with three sessions (two
// channels, one without origin, one crossing midnight), tool turns and a
// compaction left out, a heading inside a turn escaped.
func TestEpisodesGolden(t *testing.T) {
	es, k := newHome(t, "UTC")
	r, err := runEpisodes(es, context.Background(), memhost.EpisodesRequest{Date: "2026-02-13"})
	if err != nil {
		t.Fatal(err)
	}
	want := memhost.EpisodeDay{Date: "2026-02-13", Path: "episodes/2026-02-13.md", State: Written, Sessions: 3, Messages: 6}
	if len(r.Days) != 1 || r.Days[0] != want {
		t.Fatalf("got %+v, want %+v", r.Days, want)
	}
	got := k.read(t, "episodes/2026-02-13.md")
	golden := "testdata/golden/2026-02-13.md"
	if *update {
		os.MkdirAll(filepath.Dir(golden), 0o755)
		os.WriteFile(golden, []byte(got), 0o644)
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(b) {
		t.Fatalf("the page differs from %s (-update rewrites it):\n%s", golden, got)
	}
	if len(k.changes) != 1 || strings.Join(k.changes[0].Paths, ",") != "episodes/2026-02-13.md" || k.changes[0].Op != "episodes" {
		t.Fatalf("changes %+v, want one naming the page", k.changes)
	}
	if strings.Join(k.indexed, ",") != "episodes/2026-02-13.md" {
		t.Fatalf("indexed %v", k.indexed)
	}
	if g, ok := Generated([]byte(got)); !g || !ok {
		t.Fatalf("Generated = %v, %v; want true, true", g, ok)
	}
}

// TestEpisodesIdempotent: a second run, and a run of the range around the
// day, write nothing and publish nothing; a transcript that grew gives
// the page its new turn once.
func TestEpisodesIdempotent(t *testing.T) {
	ctx := context.Background()
	es, k := newHome(t, "UTC")
	if _, err := runEpisodes(es, ctx, memhost.EpisodesRequest{Date: "2026-02-13"}); err != nil {
		t.Fatal(err)
	}
	first := k.read(t, "episodes/2026-02-13.md")
	r, err := runEpisodes(es, ctx, memhost.EpisodesRequest{Since: "2026-02-13", Until: "2026-02-13"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := states(r), "2026-02-13 unchanged"; got != want {
		t.Fatalf("second run: %s, want %s", got, want)
	}
	if again := k.read(t, "episodes/2026-02-13.md"); again != first || len(k.changes) != 1 {
		t.Fatalf("the second run changed the page or published (%d changes)", len(k.changes))
	}

	if _, err := k.store.Append(ctx, "wa-ada", memhost.Turn{ID: "w5", Type: "message", Role: "assistant", Content: "Phase 4 started.", Channel: "whatsapp", SourceID: "919876543210"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := runEpisodes(es, ctx, memhost.EpisodesRequest{}); err != nil { // today: 2026-02-13
			t.Fatal(err)
		}
	}
	page := k.read(t, "episodes/2026-02-13.md")
	if n := strings.Count(page, "Phase 4 started."); n != 1 {
		t.Fatalf("the new turn is on the page %d times:\n%s", n, page)
	}
	if !strings.Contains(page, "total_messages: 7\n") || !strings.Contains(page, "## Session: whatsapp/919876543210 (10:32 - 18:00)") {
		t.Fatalf("the page does not count the new turn:\n%s", page)
	}
	if len(k.changes) != 2 {
		t.Fatalf("%d changes published, want 2 (one per write)", len(k.changes))
	}
}

// TestEpisodesKeepEdited: a page a person edited, and one a person wrote,
// are left as they are and reported kept, while other days are written.
func TestEpisodesKeepEdited(t *testing.T) {
	ctx := context.Background()
	es, k := newHome(t, "UTC")
	if _, err := runEpisodes(es, ctx, memhost.EpisodesRequest{Date: "2026-02-13"}); err != nil {
		t.Fatal(err)
	}
	abs := k.nb.Abs("episodes/2026-02-13.md")
	edited := strings.Replace(k.read(t, "episodes/2026-02-13.md"), "2 workers active.", "2 workers active. (Checked again at noon: fine.)", 1)
	if err := os.WriteFile(abs, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	mine := "# My notes of the 12th\n\nBob asked about staging.\n"
	if err := os.WriteFile(k.nb.Abs("episodes/2026-02-12.md"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := k.store.Append(ctx, "wa-ada", memhost.Turn{ID: "w5", Type: "message", Role: "assistant", Content: "Phase 4 started."}); err != nil {
		t.Fatal(err)
	}
	r, err := runEpisodes(es, ctx, memhost.EpisodesRequest{Since: "2026-02-12", Until: "2026-02-15"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := states(r), "2026-02-12 kept, 2026-02-13 kept, 2026-02-14 written, 2026-02-15 empty"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if got := k.read(t, "episodes/2026-02-13.md"); got != edited {
		t.Fatalf("the edited page was changed:\n%s", got)
	}
	if got := k.read(t, "episodes/2026-02-12.md"); got != mine {
		t.Fatalf("the person's page was changed:\n%s", got)
	}
	if _, err := os.Stat(k.nb.Abs("episodes/2026-02-15.md")); err == nil {
		t.Fatal("a day without conversations got a page")
	}
	if len(k.changes) != 2 || strings.Join(k.changes[1].Paths, ",") != "episodes/2026-02-14.md" {
		t.Fatalf("changes %+v: want the 14th's page alone in the second", k.changes)
	}
}

// TestEpisodesTimeZone: days and times are the configured zone's: in
// Tokyo (UTC+9) the notes session, 23:50 UTC, is the next morning's,
// and Bob's message of 22:10 UTC on the 12th is the 13th's.
func TestEpisodesTimeZone(t *testing.T) {
	es, k := newHome(t, "Asia/Tokyo")
	if _, err := runEpisodes(es, context.Background(), memhost.EpisodesRequest{Since: "2026-02-13", Until: "2026-02-14"}); err != nil {
		t.Fatal(err)
	}
	for rel, wants := range map[string][]string{
		"episodes/2026-02-13.md": {"sessions: 2\n", "## Session: telegram/4242 (07:10 - 23:06)", "### Bob (07:10)"},
		"episodes/2026-02-14.md": {"sessions: 1\n", "## Session: notes (08:50 - 09:10)", "### User (08:50)"},
	} {
		page := k.read(t, rel)
		for _, want := range wants {
			if !strings.Contains(page, want) {
				t.Fatalf("no %q in %s:\n%s", want, rel, page)
			}
		}
	}
}

func TestEpisodesBadInput(t *testing.T) {
	es, _ := newHome(t, "UTC")
	for _, tc := range []struct {
		req   memhost.EpisodesRequest
		field string
	}{
		{memhost.EpisodesRequest{Date: "13.02.2026"}, "date"},
		{memhost.EpisodesRequest{Date: "2026-02-13", Since: "2026-02-01"}, "date"},
		{memhost.EpisodesRequest{Since: "2026-02-01"}, "since"},
		{memhost.EpisodesRequest{Since: "2026-02-10", Until: "2026-02-01"}, "until"},
		{memhost.EpisodesRequest{Since: "2025-01-01", Until: "2026-02-01"}, "until"},
	} {
		_, err := runEpisodes(es, context.Background(), tc.req)
		if fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != tc.field {
			t.Errorf("%+v: got %v, want a bad-input error about %s", tc.req, err, tc.field)
		}
	}
}

// TestDayStatus: what health judges, before and after the page is
// written, and once a person edited it.
func TestDayStatus(t *testing.T) {
	ctx := context.Background()
	es, k := newHome(t, "UTC")
	st, err := es.DayStatus(ctx, "2026-02-13")
	if err != nil {
		t.Fatal(err)
	}
	if st.State != Written || st.Messages != 6 || !st.Newest.Equal(time.Date(2026, 2, 13, 23, 50, 0, 0, time.UTC)) {
		t.Fatalf("before: %+v", st)
	}
	runEpisodes(es, ctx, memhost.EpisodesRequest{Date: "2026-02-13"})
	if st, _ = es.DayStatus(ctx, "2026-02-13"); st.State != Unchanged {
		t.Fatalf("after: %+v", st)
	}
	os.WriteFile(k.nb.Abs(st.Path), []byte("mine\n"), 0o644)
	if st, _ = es.DayStatus(ctx, "2026-02-13"); st.State != Kept {
		t.Fatalf("edited: %+v", st)
	}
	if st, _ = es.DayStatus(ctx, "2026-02-20"); st.Messages != 0 || st.State != Written {
		t.Fatalf("a quiet day: %+v", st)
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"## heading\ntext", `\## heading` + "\ntext"},
		{"```sh\n# comment\n```\n# after", "```sh\n# comment\n```\n" + `\# after`},
		{"````md\n```\n# inside\n````\n# after", "````md\n```\n# inside\n````\n" + `\# after`},
		{"```\n# in\n``` x\n# still in\n```\n# after", "```\n# in\n``` x\n# still in\n```\n" + `\# after`},
		{"    # code", "    # code"},
		{"\n\nhello\r\nworld\n\n", "hello\nworld"},
	} {
		if got := text(tc.in); got != tc.want {
			t.Errorf("text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEpisodesConcurrent: runs at once with a transcript growing under
// them (go test -race) leave a page of every turn, each once.
func TestEpisodesConcurrent(t *testing.T) {
	ctx := context.Background()
	es, k := newHome(t, "UTC")
	const turns = 20
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range turns {
			if _, err := k.store.Append(ctx, "wa-ada", memhost.Turn{Type: "message", Role: "user", Content: fmt.Sprintf("turn number %d", i)}); err != nil {
				errs <- err
				return
			}
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if _, err := runEpisodes(es, ctx, memhost.EpisodesRequest{Date: "2026-02-13"}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := runEpisodes(es, ctx, memhost.EpisodesRequest{Date: "2026-02-13"}); err != nil {
		t.Fatal(err)
	}
	page := k.read(t, "episodes/2026-02-13.md")
	for i := range turns {
		if n := strings.Count(page, fmt.Sprintf("turn number %d\n", i)); n != 1 {
			t.Fatalf("turn %d is on the page %d times:\n%s", i, n, page)
		}
	}
	if !strings.Contains(page, fmt.Sprintf("total_messages: %d\n", 6+turns)) {
		t.Fatalf("the page does not count every turn:\n%s", page)
	}
}

// TestEpisodesFolder: the pages go where memory.episodes.folder says.
func TestEpisodesFolder(t *testing.T) {
	es, k := newHome(t, "UTC")
	k.cfg.Memory.Episodes.Folder = "journal/chats"
	r, err := runEpisodes(es, context.Background(), memhost.EpisodesRequest{Date: "2026-02-13"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Days[0].Path != "journal/chats/2026-02-13.md" {
		t.Fatalf("path %q", r.Days[0].Path)
	}
	if _, err := os.Stat(k.nb.Abs("journal/chats/2026-02-13.md")); err != nil {
		t.Fatal(err)
	}
}

// A day's log reads only the transcripts with messages that day, as far
// as it knows them (the simulated year's stop hook grew with every
// transcript of the home); a transcript that grew since is read again,
// so a message it gained on the day is in the page.
func TestEpisodesSeeATranscriptThatGrew(t *testing.T) {
	es, k := newHome(t, "UTC")
	ctx := context.Background()
	const day = "2026-03-01"
	appendTurn := func(session, id, content, at string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(k.store.Dir, session+".jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := fmt.Fprintf(f, `{"id":%q,"type":"message","role":"user","content":%q,"timestamp":%q}`+"\n", id, content, at); err != nil {
			t.Fatal(err)
		}
	}
	appendTurn("later", "l1", "the first message of March", day+"T09:00:00Z")
	if _, err := runEpisodes(es, ctx, memhost.EpisodesRequest{Date: day}); err != nil {
		t.Fatal(err)
	}
	// notes.jsonl had nothing on the day when the page was written.
	appendTurn("notes", "n99", "a message notes gained on the day", day+"T10:00:00Z")
	if _, err := runEpisodes(es, ctx, memhost.EpisodesRequest{Date: day}); err != nil {
		t.Fatal(err)
	}
	page := k.read(t, "episodes/"+day+".md")
	for _, want := range []string{"the first message of March", "a message notes gained on the day"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
}
