package host

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/knowledge"
)

// publishOps run write operations through the Host, each in a home where
// it changes something, and say what its Change must name.
var publishOps = []struct {
	op   string
	path string // a path the Change names (in Paths or Removed); "" for a note only
	run  func(ctx context.Context, h *Host) error
}{
	{"init", "", func(ctx context.Context, h *Host) error { _, err := h.Init(ctx, memhost.InitRequest{}); return err }},
	{"remember", "knowledge/rules.md", func(ctx context.Context, h *Host) error {
		_, err := h.Remember(ctx, memhost.RememberRequest{Text: "Publish every write", Category: "knowledge", File: "rules"})
		return err
	}},
	{"daily-log", "", func(ctx context.Context, h *Host) error {
		_, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "shipped the chain"})
		return err
	}},
	{"write", "knowledge/new.md", func(ctx context.Context, h *Host) error {
		_, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/new.md", Text: "# New\n"})
		return err
	}},
	{"rm", "knowledge/doomed.md", func(ctx context.Context, h *Host) error {
		_, err := h.Remove(ctx, memhost.RemoveRequest{Path: "knowledge/doomed.md"})
		return err
	}},
	{"page/save", "knowledge/base.md", func(ctx context.Context, h *Host) error {
		p, err := h.Page(ctx, memhost.PageRequest{Path: "knowledge/base.md"})
		if err != nil {
			return err
		}
		_, err = h.SavePage(ctx, memhost.SavePageRequest{Path: "knowledge/base.md", Text: p.Text + "\n- saved whole", BaseHash: p.Hash})
		return err
	}},
	{"mv", "knowledge/moving.md", func(ctx context.Context, h *Host) error {
		_, err := h.Move(ctx, memhost.MoveRequest{From: "knowledge/moving.md", To: "reference/moved.md"})
		return err
	}},
	{"session/append", "sessions/s1.jsonl", func(ctx context.Context, h *Host) error {
		_, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "hello"})
		return err
	}},
	{"fact/add", "", func(ctx context.Context, h *Host) error {
		_, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "Sarah Chen", Attribute: "role", Value: "engineer"})
		return err
	}},
	{"fact/forget", "", func(ctx context.Context, h *Host) error {
		if _, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "Sarah Chen", Attribute: "role", Value: "engineer"}); err != nil {
			return err
		}
		_, err := h.FactForget(ctx, knowledge.FactForgetRequest{Entity: "Sarah Chen", Attribute: "role"})
		return err
	}},
	{"secrets/redact", "reference/ci.md", func(ctx context.Context, h *Host) error {
		_, err := h.SecretsRedact(ctx, memhost.SecretsRedactRequest{})
		return err
	}},
	{"models/rm", "", func(ctx context.Context, h *Host) error {
		_, err := h.RemoveModel(ctx, memhost.RemoveModelRequest{Name: "old-model"})
		return err
	}},
	{"session/ingest", "sessions/claude-4f35e220-c435.jsonl", func(ctx context.Context, h *Host) error {
		_, err := h.Ingest(ctx, memhost.IngestRequest{Paths: []string{claudeTranscript(h.Home())}})
		return err
	}},
	{"session/compact", "sessions/s3.jsonl", func(ctx context.Context, h *Host) error {
		// The first turn alone passes memory.compaction.keepRecentTokens.
		for _, text := range []string{strings.Repeat("the first turn ", 7000), "the second turn"} {
			if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s3", Role: "user", Text: text}); err != nil {
				return err
			}
		}
		_, err := h.SessionCompact(ctx, memhost.SessionCompactRequest{Session: "s3", Summary: "two turns"})
		return err
	}},
	{"import", "knowledge/imported.md", func(ctx context.Context, h *Host) error {
		other, err := Open(ctx, Options{Home: filepath.Join(h.Home(), "..", "other"), Config: config.Default()})
		if err != nil {
			return err
		}
		defer other.Close()
		if _, err := other.Write(ctx, memhost.WriteRequest{Path: "knowledge/imported.md", Text: "# Imported\n"}); err != nil {
			return err
		}
		file := filepath.Join(h.Home(), "..", "other.tar.gz")
		if _, err := other.Export(ctx, memhost.ExportRequest{Path: file}); err != nil {
			return err
		}
		_, err = h.Import(ctx, memhost.ImportRequest{Path: file})
		return err
	}},
	{"skills/learn", "skills/learned/read-edit.md", func(ctx context.Context, h *Host) error {
		learnable(ctx, h)
		_, err := h.SkillLearn(ctx, memhost.SkillLearnRequest{})
		return err
	}},
	{"skills/review", "skills/learned/read-edit.md", func(ctx context.Context, h *Host) error {
		learnable(ctx, h)
		if _, err := h.SkillLearn(ctx, memhost.SkillLearnRequest{}); err != nil {
			return err
		}
		_, err := h.SkillReview(ctx, memhost.SkillReviewRequest{Slug: "read-edit", Status: memhost.SkillAccepted})
		return err
	}},
	{"consolidate", "", func(ctx context.Context, h *Host) error {
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s4", Role: "user", Text: "Sarah Chen is an engineer."}); err != nil {
			return err
		}
		h.impl.SetGenerator(&scriptedGenerator{answer: func(string, int) (string, error) {
			return `{"facts": [{"entity": "Sarah Chen", "attribute": "role", "value": "engineer", "episode": "e1"}], "relations": []}`, nil
		}})
		_, err := h.Consolidate(ctx, knowledge.ConsolidateRequest{})
		return err
	}},
	{"models/pull", "", func(ctx context.Context, h *Host) error {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("GGUF, a tiny model file"))
		}))
		defer srv.Close()
		_, err := h.PullModel(ctx, memhost.PullModelRequest{Model: srv.URL + "/tiny.gguf"})
		return err
	}},
	{"episodes", "", func(ctx context.Context, h *Host) error {
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s2", Role: "user", Text: "today's talk"}); err != nil {
			return err
		}
		_, err := h.Episodes(ctx, memhost.EpisodesRequest{})
		return err
	}},
}

// TestEveryWritePublishes: each write run through the Host publishes one
// Change under the table's name, with its response as Result and the
// path it changed; every write of the table is driven here or named with
// the test that holds it to its Change.
func TestEveryWritePublishes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	elsewhere := map[string]string{
		"prune":       "TestWritesCommitExactlyTheirPaths",
		"rollup":      "TestWritesCommitExactlyTheirPaths (its commit)",
		"git/sync":    "TestFedSyncIndexesWhatChanged",
		"git/init":    "TestWritesCommitExactlyTheirPaths (runs it; a note only)",
		"hook":        "publishes nothing itself: its ingest does",
		"plugins/use": "not driven: needs a plugin binary",
	}
	driven := map[string]bool{}
	for _, p := range publishOps {
		driven[p.op] = true
	}
	for _, op := range api.Ops {
		in := op.Info()
		if !in.Write {
			continue
		}
		if driven[in.Name] && elsewhere[in.Name] != "" {
			t.Errorf("the write %s is driven here and named in the elsewhere list", in.Name)
		}
		if !driven[in.Name] && elsewhere[in.Name] == "" {
			t.Errorf("the write %s is not driven by TestEveryWritePublishes nor named in its elsewhere list", in.Name)
		}
	}
	for _, p := range publishOps {
		t.Run(p.op, func(t *testing.T) {
			_, h := retryHome(t)
			var got []memhost.Change
			defer h.Subscribe(func(c memhost.Change) {
				if c.Op == p.op {
					got = append(got, c)
				}
			})()
			if err := p.run(ctx, h); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%s published %d changes under its name, want 1: %+v", p.op, len(got), got)
			}
			c := got[0]
			if c.Result == nil || c.Note == "" {
				t.Errorf("%s published %+v: no result or no note", p.op, c)
			}
			if p.path != "" && !slices.Contains(c.Paths, p.path) && !slices.Contains(c.Removed, p.path) {
				t.Errorf("%s published %+v, not naming %s", p.op, c, p.path)
			}
		})
	}
}

// claudeTranscript writes a Claude Code transcript of two turns beside
// home and returns its path.
func claudeTranscript(home string) string {
	path := filepath.Join(home, "..", "4f35e220-c435.jsonl")
	os.WriteFile(path, []byte(`{"sessionId":"x","type":"user","message":{"role":"user","content":"a task"},"uuid":"u1","timestamp":"2025-05-26T08:00:00.000Z"}
{"sessionId":"x","type":"assistant","message":{"role":"assistant","content":"done"},"uuid":"a1","timestamp":"2025-05-26T08:00:30.000Z"}
`), 0o644)
	return path
}

// learnable appends three sessions that run the same tools, a skill to
// learn ("read-edit").
func learnable(ctx context.Context, h *Host) {
	for _, s := range []string{"t1", "t2", "t3"} {
		h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: s, Role: "user", Text: "fix the build"})
		for _, tool := range []string{"Read", "Edit"} {
			h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: s, Role: "tool", Text: "called " + tool, Meta: []byte(`{"tool":"` + tool + `"}`)})
		}
	}
}

// TestAFailedWritePublishesNothing: a write refused before it wrote
// publishes nothing.
func TestAFailedWritePublishesNothing(t *testing.T) {
	t.Parallel()
	_, h := retryHome(t)
	var got []memhost.Change
	defer h.Subscribe(func(c memhost.Change) { got = append(got, c) })()
	if _, err := h.Write(context.Background(), memhost.WriteRequest{Path: "../outside.md", Text: "x"}); err == nil {
		t.Fatal("a write outside the notebook succeeded")
	}
	if _, err := h.Remember(context.Background(), memhost.RememberRequest{Text: "  "}); err == nil {
		t.Fatal("an empty remember succeeded")
	}
	if len(got) != 0 {
		t.Errorf("failed writes published %+v", got)
	}
}
