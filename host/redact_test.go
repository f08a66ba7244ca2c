package host

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/internal/secretsample"
	"github.com/memhost/memhost/knowledge"
)

// Published sample credentials of gitleaks' rules (not live ones).
const (
	sampleAWS    = secretsample.AWS
	sampleGitHub = secretsample.GitHub
	sampleSlack  = secretsample.Slack
)

// Under the default policy no secret given to a write reaches a file of
// the home (the notebook, the transcripts, the index and its journals):
// each write path replaces it by its marker and says so, and the same
// write again gives the same page.
func TestSecretsRedactedOnEveryWritePath(t *testing.T) {
	ctx := context.Background()
	h := newHost(t)
	check := func(path string, red []memhost.Redaction, rule string) {
		t.Helper()
		if len(red) == 0 || red[0].Rule != rule || len(red[0].Fingerprint) != 4 {
			t.Fatalf("%s: redactions %+v, want %s", path, red, rule)
		}
	}
	r, err := h.Remember(ctx, memhost.RememberRequest{Text: "the CI key is " + sampleAWS, Category: "reference", File: "ci", RequestID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	check("remember", r.Redacted, "aws-access-token")
	if again, err := h.Remember(ctx, memhost.RememberRequest{Text: "the CI key is " + sampleAWS, Category: "reference", File: "ci", RequestID: "r1"}); err != nil || again.Lines != r.Lines {
		t.Fatalf("remember retried: %+v %v", again, err)
	}
	w, err := h.Write(ctx, memhost.WriteRequest{Path: "knowledge/tokens.md", Text: "---\ntoken: " + sampleGitHub + "\n---\n# Tokens\n\nsee [[ci]]\n"})
	if err != nil {
		t.Fatal(err)
	}
	check("write", w.Redacted, "github-pat")
	d, err := h.DailyLog(ctx, memhost.DailyLogRequest{Text: "rotated the bot token\nnew one " + sampleSlack})
	if err != nil {
		t.Fatal(err)
	}
	check("daily-log", d.Redacted, "slack-bot-token")
	s, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "my key is " + sampleAWS})
	if err != nil {
		t.Fatal(err)
	}
	check("session append", s.Redacted, "aws-access-token")
	src := filepath.Join(t.TempDir(), "chat.jsonl")
	os.WriteFile(src, []byte(`{"id":"1","role":"user","content":"use `+sampleGitHub+`"}`+"\n"+`{"id":"2","role":"tool","content":"env","metadata":{"out":"AWS=`+sampleAWS+`"}}`+"\n"), 0o600)
	in, err := h.Ingest(ctx, memhost.IngestRequest{Paths: []string{src}, Format: "memhost"})
	if err != nil || len(in.Files) != 1 || in.Files[0].Added != 2 {
		t.Fatalf("ingest: %+v %v", in, err)
	}
	if red := in.Files[0].Redacted; len(red) != 2 || red[0].Field != "line 1 content" || red[1].Field != "line 2 metadata" {
		t.Fatalf("ingest redactions: %+v", red)
	}
	fa, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: "ci", Attribute: "deploy key", Value: sampleGitHub, Source: "pasted AWS=" + sampleAWS})
	if err != nil {
		t.Fatalf("fact add: %v", err)
	}
	if red := fa.Redacted; len(red) != 2 || red[0].Field != "value" || red[0].Rule != "github-pat" || red[1].Field != "source" || red[1].Rule != "aws-access-token" {
		t.Fatalf("fact add redactions: %+v", red)
	}
	sv, err := h.SavePage(ctx, memhost.SavePageRequest{Path: "lists/env.md", Text: "# Env\n\n- SLACK=" + sampleSlack})
	if err != nil {
		t.Fatal(err)
	}
	check("the dashboard's editor", sv.Redacted, "slack-bot-token")
	page := readPage(t, h, "knowledge/tokens.md")
	if !strings.Contains(page, `token: "[secret redacted: github-pat …`) || !strings.Contains(page, "# Tokens") || !strings.Contains(page, "[[ci]]") {
		t.Fatalf("the page's structure:\n%s", page)
	}
	h.Close()
	for _, secret := range []string{sampleAWS, sampleGitHub, sampleSlack} {
		if files := secretsample.Holding(h.Home(), secret); len(files) > 0 {
			t.Fatalf("%.8s… is in %v", secret, files)
		}
	}
}

// keep-local and allow store what was written.
func TestSecretsPolicyKeeps(t *testing.T) {
	for _, policy := range []string{config.SecretsKeepLocal, config.SecretsAllow} {
		h := openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.Privacy.Secrets = policy })
		r, err := h.Remember(context.Background(), memhost.RememberRequest{Text: "key " + sampleAWS})
		if err != nil || len(r.Redacted) != 0 {
			t.Fatalf("%s: %+v %v", policy, r, err)
		}
		if files := secretsample.Holding(h.NotebookDir(), sampleAWS); len(files) != 1 {
			t.Fatalf("%s: the key is in %v", policy, files)
		}
	}
}

// An export leaves out the files that hold a secret (here written under
// keep-local) and names them, unless asked to include them.
func TestExportLeavesSecretsOut(t *testing.T) {
	ctx := context.Background()
	h := openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.Privacy.Secrets = config.SecretsKeepLocal })
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "key " + sampleAWS, Category: "reference", File: "ci"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "a clean fact", Category: "knowledge"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ex, err := h.Export(ctx, memhost.ExportRequest{Path: filepath.Join(dir, "a.tar.gz")})
	if err != nil || ex.Files != 1 || len(ex.LeftOut) != 1 || ex.LeftOut[0].Path != "notebook/reference/ci.md" || ex.LeftOut[0].Rule != "aws-access-token" {
		t.Fatalf("export: %+v %v", ex, err)
	}
	if archiveHolds(t, ex.Path, sampleAWS) || !archiveHolds(t, ex.Path, "a clean fact") {
		t.Fatal("the archive holds the key, or not the clean page")
	}
	all, err := h.Export(ctx, memhost.ExportRequest{Path: filepath.Join(dir, "all.tar.gz"), IncludeSecrets: true})
	if err != nil || all.Files != 2 || len(all.LeftOut) != 0 || !archiveHolds(t, all.Path, sampleAWS) {
		t.Fatalf("export with secrets: %+v %v", all, err)
	}
}

// An archive that holds secrets (exported with them, from a keep-local
// home) is imported into a home under the default policy: the pages and
// transcripts are stored redacted, every other byte as in the archive,
// and the answer says what was redacted where.
func TestImportRedactsSecrets(t *testing.T) {
	ctx := context.Background()
	a := openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.Privacy.Secrets = config.SecretsKeepLocal })
	if _, err := a.Remember(ctx, memhost.RememberRequest{Text: "key " + sampleAWS, Category: "reference", File: "ci"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "my token is " + sampleGitHub}); err != nil {
		t.Fatal(err)
	}
	all, err := a.Export(ctx, memhost.ExportRequest{Path: filepath.Join(t.TempDir(), "all.tar.gz"), IncludeSecrets: true})
	if err != nil || !archiveHolds(t, all.Path, sampleAWS) || !archiveHolds(t, all.Path, sampleGitHub) {
		t.Fatalf("export with secrets: %+v %v", all, err)
	}
	b := newHost(t)
	im, err := b.Import(ctx, memhost.ImportRequest{Path: all.Path})
	if err != nil || len(im.Added) != 2 {
		t.Fatalf("import: %+v %v", im, err)
	}
	if len(im.Redacted) != 2 || im.Redacted[0].Field != "notebook/reference/ci.md" || im.Redacted[0].Rule != "aws-access-token" ||
		im.Redacted[1].Field != "sessions/s1.jsonl" || im.Redacted[1].Rule != "github-pat" {
		t.Fatalf("import's redactions: %+v", im.Redacted)
	}
	if page := readPage(t, b, "reference/ci.md"); !strings.Contains(page, "key [secret redacted: aws-access-token …") {
		t.Errorf("the imported page:\n%s", page)
	}
	turns, err := b.Transcript(ctx, memhost.TranscriptRequest{Session: "s1"})
	if err != nil || len(turns.Turns) != 1 || !strings.Contains(turns.Turns[0].Content, "[secret redacted: github-pat …") {
		t.Fatalf("the imported transcript: %+v %v", turns, err)
	}
	b.Close()
	for _, secret := range []string{sampleAWS, sampleGitHub} {
		if files := secretsample.Holding(b.Home(), secret); len(files) > 0 {
			t.Fatalf("%.8s… is in %v", secret, files)
		}
	}
}

// archiveHolds reports whether the uncompressed bytes of a .tar.gz hold s.
func archiveHolds(t *testing.T, path, s string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(data, []byte(s))
}

// A home that already holds secrets (written under allow, or by an
// editor, and committed): scan lists them, with the history's versions,
// never the secret; redact rewrites the page and the transcript in place
// (every other byte kept, the transcript still JSON) and the index with
// them; run again it writes nothing.
func TestSecretsScanAndRedact(t *testing.T) {
	ctx := context.Background()
	h := openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.Privacy.Secrets = config.SecretsAllow })
	if _, err := h.GitInit(ctx, memhost.GitInitRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "deploy key " + sampleGitHub, Category: "reference", File: "ci"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "user", Text: "my key is " + sampleAWS}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s1", Role: "assistant", Text: "noted"}); err != nil {
		t.Fatal(err)
	}
	if err := h.impl.FlushCommits(ctx); err != nil {
		t.Fatal(err)
	}
	sc, err := h.SecretsScan(ctx, memhost.SecretsScanRequest{History: true})
	if err != nil {
		t.Fatal(err)
	}
	var now, hist int
	for _, f := range sc.Findings {
		if f.History {
			hist++
		} else {
			now++
		}
	}
	if now != 2 || hist < 2 {
		t.Fatalf("scan: %+v", sc.Findings)
	}
	if b, _ := json.Marshal(sc); bytes.Contains(b, []byte(sampleAWS)) || bytes.Contains(b, []byte(sampleGitHub)) {
		t.Fatal("the scan's answer holds a secret")
	}
	before, _ := os.ReadFile(filepath.Join(h.Home(), "sessions", "s1.jsonl"))
	rd, err := h.SecretsRedact(ctx, memhost.SecretsRedactRequest{})
	if err != nil || len(rd.Files) != 2 || rd.Indexed != 2 {
		t.Fatalf("redact: %+v %v", rd, err)
	}
	after, _ := os.ReadFile(filepath.Join(h.Home(), "sessions", "s1.jsonl"))
	if want := bytes.Replace(before, []byte(sampleAWS), []byte("[secret redacted: aws-access-token …"+rd.Redacted[len(rd.Redacted)-1].Fingerprint+"]"), 1); !bytes.Equal(after, want) {
		t.Fatalf("the transcript is not the same bytes but the secret:\n%s\nwant\n%s", after, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(after)), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("a transcript line is no longer JSON: %s", line)
		}
	}
	if _, err := h.Recall(ctx, memhost.RecallRequest{Query: "deploy key"}); err != nil {
		t.Fatal(err)
	}
	h.Close()
	for _, dir := range []string{"notebook", "sessions", "brain"} {
		for _, s := range []string{sampleAWS, sampleGitHub} {
			if files := secretsample.Holding(filepath.Join(h.Home(), dir), s); len(files) > 0 {
				t.Fatalf("%.8s… still in %v", s, files)
			}
		}
	}
	h = openHost(t, h.Home(), func(c *config.Config) { c.Memory.Privacy.Secrets = config.SecretsAllow })
	if again, err := h.SecretsRedact(ctx, memhost.SecretsRedactRequest{}); err != nil || len(again.Files) != 0 {
		t.Fatalf("redact again: %+v %v", again, err)
	}
}

// Health fails while the home holds a secret (here stored under
// keep-local), names it and the command, and passes once it is redacted.
func TestHealthFailsWhileASecretIsStored(t *testing.T) {
	ctx := context.Background()
	h := openHost(t, t.TempDir(), func(c *config.Config) { c.Memory.Privacy.Secrets = config.SecretsKeepLocal })
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "key " + sampleAWS, Category: "reference", File: "ci"}); err != nil {
		t.Fatal(err)
	}
	check := func() memhost.HealthCheck {
		t.Helper()
		hr, err := h.Health(ctx, memhost.HealthRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range hr.Checks {
			if c.Name == "secrets" {
				return c
			}
		}
		t.Fatal("no secrets check")
		return memhost.HealthCheck{}
	}
	if c := check(); c.Status != "fail" || !strings.Contains(c.Message, "notebook/reference/ci.md:3 aws-access-token") || !strings.Contains(c.Message, "memhost secrets redact") {
		t.Fatalf("health: %+v", c)
	}
	if _, err := h.SecretsRedact(ctx, memhost.SecretsRedactRequest{}); err != nil {
		t.Fatal(err)
	}
	if c := check(); c.Status != "pass" {
		t.Fatalf("health after redact: %+v", c)
	}
}
