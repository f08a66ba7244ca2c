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

	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/host/requests"
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
		return h.Write(ctx, WriteRequest{Path: "knowledge/retry.md", Text: "the write that must land once", RequestID: id})
	}},
	{"write-section", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.Write(ctx, WriteRequest{Path: "knowledge/base.md", Section: "Notes", Text: "a section line that must land once", RequestID: id})
	}},
	{"daily-log", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.DailyLog(ctx, DailyLogRequest{Text: "deployed the retry fix", RequestID: id})
	}},
	{"remember", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.Remember(ctx, RememberRequest{Text: "Retries must never double a word", Category: "knowledge", File: "rules", RequestID: id})
	}},
	{"fact-add", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.FactAdd(ctx, FactAddRequest{Entity: "Sarah Chen", Attribute: "role", Value: "engineer", RequestID: id})
	}},
	{"rm", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.Remove(ctx, RemoveRequest{Path: "knowledge/doomed.md", RequestID: id})
	}},
	{"mv", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.Move(ctx, MoveRequest{From: "knowledge/moving.md", To: "reference/moved.md", RequestID: id})
	}},
	{"models-rm", func(ctx context.Context, h *Host, id string) (any, error) {
		return h.RemoveModel(ctx, RemoveModelRequest{Name: "old-model", RequestID: id})
	}},
}

// retryHome is a home with the pages the retried operations work on.
func retryHome(t *testing.T) (string, *Host) {
	home := t.TempDir()
	h := openHost(t, home, nil)
	writePage(t, h, "knowledge/base.md", "# Base\n\n## Notes\n\n- first\n\n## Later\n\n- last\n")
	writePage(t, h, "knowledge/doomed.md", "# Doomed\n")
	writePage(t, h, "knowledge/moving.md", "# Moving\n")
	writePage(t, h, "knowledge/linker.md", "# Linker\n\nsee [[moving]]\n")
	if err := os.WriteFile(filepath.Join(home, "models", "old-model.gguf"), []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sync(context.Background(), SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	return home, h
}

// TestRetryWritesOnce runs every write operation, then runs it again with
// the same request id in a second process's Host (the launcher's re-run
// after its server died before answering): the notebook is as after the
// first run, and the answer the same.
func TestRetryWritesOnce(t *testing.T) {
	ctx := context.Background()
	for _, op := range retryOps {
		t.Run(op.name, func(t *testing.T) {
			home, h := retryHome(t)
			first, err := op.run(ctx, h, "req-"+op.name)
			if err != nil {
				t.Fatalf("first run: %v", err)
			}
			after := notebookFiles(t, h)
			again := openHost(t, home, nil)
			second, err := op.run(ctx, again, "req-"+op.name)
			if err != nil {
				t.Fatalf("the retry failed: %v", err)
			}
			_, modelErr := os.Stat(filepath.Join(home, "models", "old-model.gguf"))
			if op.name == "models-rm" && !os.IsNotExist(modelErr) {
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
	ctx := context.Background()
	_, h := retryHome(t)
	before := readPage(t, h, "knowledge/base.md")
	rec := requests.Record{ID: "killed", Op: "write", Path: "knowledge/base.md",
		Before: requests.Hash([]byte(before), true), After: requests.Hash([]byte("what it would have written"), true),
		Inserted: "\n- a section line that must land once"}
	if err := h.requests.Put(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write(ctx, WriteRequest{Path: "knowledge/base.md", Section: "Notes", Text: "a section line that must land once", RequestID: "killed"}); err != nil {
		t.Fatal(err)
	}
	if got := readPage(t, h, "knowledge/base.md"); strings.Count(got, "a section line that must land once") != 1 {
		t.Fatalf("the write of a request killed before its rename did not land once:\n%s", got)
	}
}

// TestRetryAfterOthersWrote: another writer appended after the first run
// landed and before the retry; the retry finds its text under theirs.
func TestRetryAfterOthersWrote(t *testing.T) {
	ctx := context.Background()
	_, h := retryHome(t)
	for _, id := range []string{"mine", "theirs"} {
		if _, err := h.Write(ctx, WriteRequest{Path: "knowledge/base.md", Section: "Notes", Text: "written by " + id, RequestID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Write(ctx, WriteRequest{Path: "knowledge/base.md", Section: "Notes", Text: "written by mine", RequestID: "mine"}); err != nil {
		t.Fatal(err)
	}
	if got := readPage(t, h, "knowledge/base.md"); strings.Count(got, "written by mine") != 1 || strings.Count(got, "written by theirs") != 1 {
		t.Fatalf("a retry after another write doubled a line:\n%s", got)
	}
}

// TestRetryOfADailyLogAfterMidnight: the first run wrote yesterday's log
// at 23:59; the retry at 00:00 finds it there and writes nothing today.
func TestRetryOfADailyLogAfterMidnight(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	now := time.Date(2027, 3, 4, 23, 59, 30, 0, time.UTC)
	h := openHost(t, home, nil)
	h.now = func() time.Time { return now }
	first, err := h.DailyLog(ctx, DailyLogRequest{Text: "shipped before midnight", RequestID: "late"})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	second, err := h.DailyLog(ctx, DailyLogRequest{Text: "shipped before midnight", RequestID: "late"})
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
	ctx := context.Background()
	_, h := retryHome(t)
	before := notebookFiles(t, h)
	for _, id := range []string{"../x", "a/b", strings.Repeat("x", 65), "sp ace"} {
		_, err := h.Write(ctx, WriteRequest{Path: "knowledge/x.md", Text: "text", RequestID: id})
		if fault.KindOf(err) != fault.BadInput {
			t.Errorf("request id %q: got %v, want a bad-input error", id, err)
		}
	}
	if _, err := h.DailyLog(ctx, DailyLogRequest{Text: "logged", RequestID: "shared"}); err != nil {
		t.Fatal(err)
	}
	mid := notebookFiles(t, h)
	_, err := h.Write(ctx, WriteRequest{Path: "knowledge/x.md", Text: "text", RequestID: "shared"})
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
	ctx := context.Background()
	_, h := retryHome(t)
	base := PageHash([]byte(readPage(t, h, "knowledge/doomed.md")))
	req := SavePageRequest{Path: "knowledge/doomed.md", Text: "# Doomed\n\nedited in the dashboard", BaseHash: base}
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
