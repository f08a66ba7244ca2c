package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/browse"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/requests"
	"github.com/memhost/memhost/knowledge"
)

// withoutWarnings drops the Warnings of a response (the index's state
// after a write, which a retry finds otherwise) for comparison.
func withoutWarnings(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	delete(m, "warnings")
	return m
}

// retryOps are the write operations a client runs again when its server
// dies: each writes once with the id it is given.
var retryOps = []struct {
	name string
	run  func(ctx context.Context, h *Host, id string) (any, error)
}{
	{"write", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.Write(ctx, memhost.WriteRequest{Path: "knowledge/retry.md", Text: "the write that must land once", RequestID: id})
	}},
	{"write-section", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.Write(ctx, memhost.WriteRequest{Path: "knowledge/base.md", Section: "Notes", Text: "a section line that must land once", RequestID: id})
	}},
	{"daily-log", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.DailyLog(ctx, memhost.DailyLogRequest{Text: "deployed the retry fix", RequestID: id})
	}},
	{"remember", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.Remember(ctx, memhost.RememberRequest{Text: "Retries must never double a word", Category: "knowledge", File: "rules", RequestID: id})
	}},
	{"fact/add", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "Sarah Chen", Attribute: "role", Value: "engineer", RequestID: id})
	}},
	{"rm", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.Remove(ctx, memhost.RemoveRequest{Path: "knowledge/doomed.md", RequestID: id})
	}},
	{"mv", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.Move(ctx, memhost.MoveRequest{From: "knowledge/moving.md", To: "reference/moved.md", RequestID: id})
	}},
	{"secrets/redact", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.SecretsRedact(ctx, memhost.SecretsRedactRequest{RequestID: id})
	}},
	{"models/rm", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.RemoveModel(ctx, memhost.RemoveModelRequest{Name: "old-model", RequestID: id})
	}},
}

// TestRetryCoversTheTable: every write of the operation table whose
// request takes a request id is in retryOps, under the table's name, but
// those whose retries are proven elsewhere.
func TestRetryCoversTheTable(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{}
	for _, op := range retryOps {
		covered[strings.TrimSuffix(op.name, "-section")] = true
	}
	// Their own tests: a session turn's id (TestAppendRetry*), a
	// fact forgotten (internal/crashtest's retry test), a compaction's
	// (TestCompactRetry*).
	elsewhere := map[string]bool{"session/append": true, "fact/forget": true, "session/compact": true}
	for _, op := range api.Ops {
		in := op.Info()
		req := reflect.TypeOf(op).Field(1).Type.In(2) // Run func(API, context.Context, Req)
		if _, ok := req.FieldByName("RequestID"); !ok {
			continue
		}
		if !in.Write {
			t.Errorf("%s takes a request id and does not write", in.Name)
		}
		if !covered[in.Name] && !elsewhere[in.Name] {
			t.Errorf("the write %s takes a request id and TestRetryWritesOnce does not retry it", in.Name)
		}
		delete(covered, in.Name)
	}
	for name := range covered {
		t.Errorf("retryOps' %s is not an operation of the table that takes a request id", name)
	}
}

// retryHome is a home with the pages the retried operations work on.
func retryHome(t *testing.T) (string, *Host) {
	home := t.TempDir()
	h := openHost(t, home, nil)
	writePage(t, h, "knowledge/base.md", "# Base\n\n## Notes\n\n- first\n\n## Later\n\n- last\n")
	writePage(t, h, "knowledge/doomed.md", "# Doomed\n")
	writePage(t, h, "knowledge/moving.md", "# Moving\n")
	writePage(t, h, "knowledge/linker.md", "# Linker\n\nsee [[moving]]\n")
	writePage(t, h, "reference/ci.md", "# CI\n\nthe CI key is "+sampleAWS+"\n") // in an editor: stored as typed
	if err := os.WriteFile(filepath.Join(home, "models", "old-model.gguf"), []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sync(context.Background(), memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	return home, h
}

// TestRetryWritesOnce runs every write operation, then runs it again with
// the same request id in a second process's Host (the launcher's re-run
// after its server died before answering): the notebook is as after the
// first run, and the answer the same.
func TestRetryWritesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, op := range retryOps {
		t.Run(op.name, func(t *testing.T) {
			home, h := retryHome(t)
			id := "req-" + strings.ReplaceAll(op.name, "/", "-")
			first, err := op.run(ctx, h, id)
			if err != nil {
				t.Fatalf("first run: %v", err)
			}
			after := notebookFiles(t, h)
			if op.name == "secrets/redact" && strings.Contains(readPage(t, h, "reference/ci.md"), sampleAWS) {
				t.Fatalf("the first run redacted nothing: %+v", first)
			}
			again := openHost(t, home, nil)
			second, err := op.run(ctx, again, id)
			if err != nil {
				t.Fatalf("the retry failed: %v", err)
			}
			_, modelErr := os.Stat(filepath.Join(home, "models", "old-model.gguf"))
			if op.name == "models/rm" && !os.IsNotExist(modelErr) {
				t.Fatalf("the model is still there: %v", modelErr)
			}
			if got := notebookFiles(t, again); !reflect.DeepEqual(got, after) {
				t.Fatalf("the retry changed the notebook:\n got %q\nwant %q", got, after)
			}
			if a, b := withoutWarnings(t, first), withoutWarnings(t, second); !reflect.DeepEqual(a, b) {
				t.Fatalf("the retry answered otherwise:\nfirst %v\nretry %v", a, b)
			}
			// A new request is a new write.
			if op.name == "write" || op.name == "write-section" || op.name == "daily-log" {
				if _, err := op.run(ctx, again, "req-other"); err != nil {
					t.Fatal(err)
				}
				if got := notebookFiles(t, again); reflect.DeepEqual(got, after) {
					t.Fatalf("a write with a new request id wrote nothing")
				}
			}
		})
	}
}

// TestRetryAfterAKillBeforeTheWrite: a server killed after it recorded
// the request but before the page was renamed into place left the page as
// it was; the retry must write it.
func TestRetryAfterAKillBeforeTheWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, h := retryHome(t)
	before := readPage(t, h, "knowledge/base.md")
	rec := requests.Record{ID: "killed", Op: "write", Path: "knowledge/base.md",
		Before: requests.Hash([]byte(before), true), After: requests.Hash([]byte("what it would have written"), true),
		Context: "# Base\n\n## Notes\n\n- first\n", New: "- a section line that must land once\n"}
	if err := h.once.Journal.Put(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/base.md", Section: "Notes", Text: "a section line that must land once", RequestID: "killed"}); err != nil {
		t.Fatal(err)
	}
	if got := readPage(t, h, "knowledge/base.md"); strings.Count(got, "a section line that must land once") != 1 {
		t.Fatalf("the write of a request killed before its rename did not land once:\n%s", got)
	}
}

// TestRetryAfterOthersWrote: another writer appended after the first run
// landed and before the retry; the retry finds its text under theirs.
func TestRetryAfterOthersWrote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, h := retryHome(t)
	for _, id := range []string{"mine", "theirs"} {
		if _, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/base.md", Section: "Notes", Text: "written by " + id, RequestID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/base.md", Section: "Notes", Text: "written by mine", RequestID: "mine"}); err != nil {
		t.Fatal(err)
	}
	if got := readPage(t, h, "knowledge/base.md"); strings.Count(got, "written by mine") != 1 || strings.Count(got, "written by theirs") != 1 {
		t.Fatalf("a retry after another write doubled a line:\n%s", got)
	}
}

// TestRetryOfADailyLogAfterMidnight: the first run wrote yesterday's log
// at 23:59; the retry at 00:00 finds it there and writes nothing today.
func TestRetryOfADailyLogAfterMidnight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	now := time.Date(2027, 3, 4, 23, 59, 30, 0, time.UTC)
	h := openHost(t, home, nil)
	h.now = func() time.Time { return now }
	first, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "shipped before midnight", RequestID: "late"})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	second, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "shipped before midnight", RequestID: "late"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Path != "daily/2027-03-04.md" || second.Path != first.Path || second.Heading != first.Heading {
		t.Fatalf("retry answered %s %q, first run %s %q", second.Path, second.Heading, first.Path, first.Heading)
	}
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), "daily", "2027-03-05.md")); !os.IsNotExist(err) {
		t.Fatalf("the retry wrote today's log too (stat: %v)", err)
	}
}

// TestRequestIDChecked: an id that cannot name a record, or one used by
// another operation, is refused and nothing is written.
func TestRequestIDChecked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, h := retryHome(t)
	before := notebookFiles(t, h)
	for _, id := range []string{"../x", "a/b", strings.Repeat("x", 65), "sp ace"} {
		_, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/x.md", Text: "text", RequestID: id})
		if fault.KindOf(err) != fault.BadInput {
			t.Errorf("request id %q: got %v, want a bad-input error", id, err)
		}
	}
	if _, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "logged", RequestID: "shared"}); err != nil {
		t.Fatal(err)
	}
	mid := notebookFiles(t, h)
	_, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/x.md", Text: "text", RequestID: "shared"})
	if fault.KindOf(err) != fault.Conflict {
		t.Errorf("a request id of another operation: got %v, want a conflict", err)
	}
	if got := notebookFiles(t, h); !reflect.DeepEqual(got, mid) || reflect.DeepEqual(got, before) {
		t.Errorf("refused requests changed the notebook")
	}
}

// TestSavePageTwice: the dashboard's save sent again (its answer lost, or
// a second click) finds the page already holding its text: a success,
// not a conflict.
func TestSavePageTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, h := retryHome(t)
	base := browse.PageHash([]byte(readPage(t, h, "knowledge/doomed.md")))
	req := memhost.SavePageRequest{Path: "knowledge/doomed.md", Text: "# Doomed\n\nedited in the dashboard", BaseHash: base}
	first, err := h.SavePage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.SavePage(ctx, req)
	if err != nil {
		t.Fatalf("the same save again: %v", err)
	}
	if second.Hash != first.Hash || second.Path != first.Path {
		t.Fatalf("the same save again answered %+v, first %+v", second, first)
	}
	// A different text on the old base is still a conflict.
	req.Text = "# Doomed\n\nedited elsewhere"
	if _, err := h.SavePage(ctx, req); fault.KindOf(err) != fault.Conflict {
		t.Fatalf("a save on a stale base: got %v, want a conflict", err)
	}
}

// TestRetryOfAMoveKilledBeforeItsLinks: the first run renamed the page and
// was killed before it rewrote the links to it; the retry rewrites them.
func TestRetryOfAMoveKilledBeforeItsLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, h := retryHome(t)
	resp := memhost.MoveResponse{From: "knowledge/moving.md", To: "reference/moved.md", Updated: []memhost.LinkUpdate{}}
	rq := once.Request{Op: "mv", ID: "half", Resp: &resp}
	if err := h.once.Begin(rq, resp.From, resp.To, false); err != nil {
		t.Fatal(err)
	}
	if err := h.notebook.Rename(ctx, resp.From, resp.To); err != nil {
		t.Fatal(err)
	}
	got, err := h.Move(ctx, memhost.MoveRequest{From: resp.From, To: resp.To, RequestID: "half"})
	if err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if page := readPage(t, h, "knowledge/linker.md"); !strings.Contains(page, "[[moved]]") {
		t.Fatalf("the retry left the link to the old name:\n%s", page)
	}
	if len(got.Updated) != 1 || got.Updated[0].Path != "knowledge/linker.md" {
		t.Fatalf("the retry answered %+v", got)
	}
	// Run again once finished, it changes nothing and answers the same.
	again, err := h.Move(ctx, memhost.MoveRequest{From: resp.From, To: resp.To, RequestID: "half"})
	if err != nil || len(again.Updated) != 1 {
		t.Fatalf("a retry of the finished move: %+v %v", again, err)
	}
}

// TestRetryOfAMoveKilledBetweenItsNames: killed after the page got its new
// name (a hard link) and before the old one was removed, both names are
// the page; the retry finishes the rename.
func TestRetryOfAMoveKilledBetweenItsNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, h := retryHome(t)
	dir := h.NotebookDir()
	if err := os.MkdirAll(filepath.Join(dir, "reference"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "knowledge", "moving.md"), filepath.Join(dir, "reference", "moved.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Move(ctx, memhost.MoveRequest{From: "knowledge/moving.md", To: "reference/moved.md", RequestID: "between"}); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "knowledge", "moving.md")); !os.IsNotExist(err) {
		t.Fatalf("the old name is still there: %v", err)
	}
	// A different page at the new name is still refused.
	writePage(t, h, "reference/other.md", "# Other\n")
	writePage(t, h, "knowledge/third.md", "# Third\n")
	if _, err := h.Move(ctx, memhost.MoveRequest{From: "knowledge/third.md", To: "reference/other.md"}); fault.KindOf(err) != fault.Conflict {
		t.Fatalf("a move onto another page: got %v, want a conflict", err)
	}
}

// TestRetryOfAFailedRemoval: a removal of a page that is not there fails
// and records nothing, so its retry fails the same way instead of
// answering that it removed the page.
func TestRetryOfAFailedRemoval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, h := retryHome(t)
	for i := range 2 {
		_, err := h.Remove(ctx, memhost.RemoveRequest{Path: "knowledge/never.md", RequestID: "never"})
		if fault.KindOf(err) != fault.NotFound {
			t.Fatalf("run %d: got %v, want not found", i+1, err)
		}
	}
	for i := range 2 {
		_, err := h.RemoveModel(ctx, memhost.RemoveModelRequest{Name: "never-pulled", RequestID: "never-model"})
		if fault.KindOf(err) != fault.NotFound {
			t.Fatalf("models rm, run %d: got %v, want not found", i+1, err)
		}
	}
}

// TestRetryOfAShortWriteUnderOthers: a write of two letters, another
// writer's same two letters after it, then the first's retry: the retry
// finds its own by the text before it, and writes nothing.
func TestRetryOfAShortWriteUnderOthers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, h := retryHome(t)
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/short.md", Text: "ok", RequestID: "short"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/short.md", Text: "ok", RequestID: "other"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/short.md", Text: "ok", RequestID: "short"}); err != nil {
		t.Fatal(err)
	}
	if got := readPage(t, h, "knowledge/short.md"); strings.Count(got, "ok") != 2 {
		t.Fatalf("two writes of \"ok\" and a retry of the first left %d:\n%s", strings.Count(got, "ok"), got)
	}
}

// TestRetryOfACompaction: a compaction run again with its request id (its
// server died before answering) finds its entry and writes no second
// one, though turns came in between that a new compaction would take.
func TestRetryOfACompaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.Compaction.KeepRecentTokens = 0 })
	for _, text := range []string{"hello there", "how are you", "fine thanks"} {
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "s1", Summary: "they greeted", RequestID: "compact-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "one more"}); err != nil {
		t.Fatal(err)
	}
	second, err := h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "s1", Summary: "they greeted", RequestID: "compact-1"})
	if err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if second.Turn.ID != first.Turn.ID || second.LastTurn != first.LastTurn || second.RemovedCount != first.RemovedCount {
		t.Fatalf("the retry answered %+v, the first run %+v", second, first)
	}
	tr, err := h.sessions.Read("s1")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Compactions != 1 {
		t.Fatalf("%d compaction entries, want 1", tr.Compactions)
	}
}
