package skills

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/sessions"
)

// Dir is the notebook folder of learned skill pages.
const Dir = "skills/learned"

// Kernel is what the skills use of the host.
type Kernel interface {
	Sessions() *sessions.Store
	Notebook() *notebook.Notebook
	Config() *config.Config
	Now() time.Time
	Location() *time.Location
	IndexWritten(ctx context.Context, rels ...string) []string
}

// SkillService runs the skill operations.
type SkillService struct{ k Kernel }

// New returns the service over k.
func New(k Kernel) *SkillService { return &SkillService{k: k} }

// pattern is one tool sequence with its observations.
type pattern struct {
	tools    []string
	obs      []observation
	sessions int
	ok       int
}

func (p pattern) skill() memhost.Skill {
	return memhost.Skill{Name: strings.Join(p.tools, " → "), Slug: slug(p.tools), Status: memhost.SkillCandidate, Tools: p.tools,
		Observations: len(p.obs), Sessions: p.sessions, SuccessRate: math.Round(1000*float64(p.ok)/float64(len(p.obs))) / 1000}
}

// slug is a sequence's page name: its tools, lowercased, joined by '-'
// (names come from transcripts, which any agent or a federated home may
// write: only a-z, 0-9 and '-' are kept). One longer than maxSlug, or
// with no letter left, is cut and made unique by a hash of the sequence.
func slug(tools []string) string {
	var parts []string
	for _, t := range tools {
		if p := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(t), "-"), "-"); p != "" {
			parts = append(parts, p)
		}
	}
	s := strings.Join(parts, "-")
	if len(s) > maxSlug || len(parts) < len(tools) {
		sum := sha256.Sum256([]byte(strings.Join(tools, "\x00")))
		s = strings.Trim(s[:min(len(s), maxSlug-13)], "-") + "-" + hex.EncodeToString(sum[:6])
	}
	return strings.TrimPrefix(s, "-")
}

// maxSlug bounds a skill page's name, well under a file name's 255 bytes.
const maxSlug = 80

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// patterns reads every transcript and groups its tasks by tool sequence,
// most observed first.
func (s *SkillService) patterns(ctx context.Context) ([]pattern, error) {
	list, err := s.k.Sessions().List(ctx)
	if err != nil {
		return nil, err
	}
	by := map[string]*pattern{}
	for _, sum := range list {
		tr, err := s.k.Sessions().Read(sum.Session)
		if fault.KindOf(err) == fault.NotFound {
			continue // removed since listed
		}
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, o := range observe(sum.Session, tr.Turns) {
			key := strings.Join(o.tools, "\x00")
			p := by[key]
			if p == nil {
				p = &pattern{tools: o.tools}
				by[key] = p
			}
			p.obs = append(p.obs, o)
			if !o.failed {
				p.ok++
			}
			if !seen[key] {
				seen[key] = true
				p.sessions++
			}
		}
	}
	out := make([]pattern, 0, len(by))
	for _, p := range by {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b pattern) int {
		return cmp.Or(-cmp.Compare(len(a.obs), len(b.obs)), slices.Compare(a.tools, b.tools))
	})
	return out, nil
}

// front is what memhost reads of a skill page's frontmatter.
type front struct {
	Name    string   `yaml:"name"`
	Status  string   `yaml:"status"`
	Tools   []string `yaml:"tools"`
	Created string   `yaml:"created"`
}

// page reads the skill page of slug; ok is false when there is none.
func (s *SkillService) page(slug string) (f front, ok bool, err error) {
	data, err := s.k.Notebook().Read(path.Join(Dir, slug+".md"))
	if errors.Is(err, fs.ErrNotExist) || fault.KindOf(err) == fault.NotFound {
		return f, false, nil
	}
	if err != nil {
		return f, false, err
	}
	fm, _ := markdown.SplitFrontmatter(string(data))
	fm = strings.TrimSuffix(strings.TrimPrefix(fm, "---\n"), "---\n")
	if err := yaml.Unmarshal([]byte(fm), &f); err != nil {
		return f, true, fault.BadInputf("slug", "%s/%s.md: its frontmatter does not parse: %v", Dir, slug, err)
	}
	return f, true, nil
}

// Skills lists the skill pages and the candidates, each with its counts
// in the transcripts as they are now.
func (s *SkillService) Skills(ctx context.Context, _ memhost.SkillsRequest) (memhost.SkillsResponse, error) {
	return s.list(ctx, nil)
}

func (s *SkillService) list(ctx context.Context, written []string) (memhost.SkillsResponse, error) {
	resp := memhost.SkillsResponse{Skills: []memhost.Skill{}, Candidates: []memhost.Skill{}, MinObservations: s.k.Config().Memory.Skills.MinObservations, Written: written}
	pats, err := s.patterns(ctx)
	if err != nil {
		return resp, err
	}
	for _, p := range pats {
		sk := p.skill()
		f, ok, err := s.page(sk.Slug)
		if err != nil {
			return resp, err
		}
		if !ok {
			resp.Candidates = append(resp.Candidates, sk)
			continue
		}
		sk.Path, sk.Status, sk.Created = path.Join(Dir, sk.Slug+".md"), cmp.Or(f.Status, memhost.SkillProposed), f.Created
		if f.Name != "" {
			sk.Name = f.Name // a person may rename it
		}
		resp.Skills = append(resp.Skills, sk)
	}
	// Pages whose sequence the transcripts no longer hold (removed, or a
	// page a person wrote): listed with no counts.
	entries, err := os.ReadDir(s.k.Notebook().Abs(Dir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return resp, err
	}
	for _, e := range entries {
		sl, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || !e.Type().IsRegular() || slices.ContainsFunc(resp.Skills, func(k memhost.Skill) bool { return k.Slug == sl }) {
			continue
		}
		f, _, err := s.page(sl)
		if err != nil {
			continue // a page whose frontmatter does not parse is a person's page, not a skill
		}
		resp.Skills = append(resp.Skills, memhost.Skill{Name: cmp.Or(f.Name, sl), Slug: sl, Path: path.Join(Dir, e.Name()), Status: cmp.Or(f.Status, memhost.SkillProposed), Tools: f.Tools, Created: f.Created})
	}
	return resp, nil
}

// SkillLearn writes the page of each sequence seen at least
// memory.skills.minObservations times (in two sessions or more), status
// proposed, and brings the counts on existing pages up to date. A page's
// other lines (its body, its status, a person's keys) are kept as they
// are: only observations, sessions, successRate and updated change. Run
// again over the same transcripts, it writes nothing.
func (s *SkillService) SkillLearn(ctx context.Context, _ memhost.SkillLearnRequest) (resp memhost.SkillsResponse, err error) {
	var written []string
	pats, err := s.patterns(ctx)
	if err != nil {
		return resp, err
	}
	min := s.k.Config().Memory.Skills.MinObservations
	today := s.k.Now().In(s.k.Location()).Format("2006-01-02")
	for _, p := range pats {
		if len(p.obs) < min || p.sessions < 2 {
			continue // quarantined until seen often enough, in more than one session
		}
		sk := p.skill()
		rel := path.Join(Dir, sk.Slug+".md")
		changed := false
		err := s.k.Notebook().Update(ctx, rel, func(old []byte, exists bool) ([]byte, error) {
			var page string
			if exists {
				page = setCounts(string(old), sk, today)
			} else {
				page = newPage(p, sk, today, s.k.Location())
			}
			if exists && page == string(old) {
				return nil, notebook.ErrUnchanged
			}
			changed = true
			return []byte(page), nil
		})
		if err != nil && !errors.Is(err, notebook.ErrUnchanged) {
			return resp, err
		}
		if changed {
			written = append(written, rel)
		}
	}
	warnings := s.k.IndexWritten(ctx, written...)
	resp, err = s.list(ctx, written)
	resp.Warnings = warnings
	return resp, err
}

// countKeys are the frontmatter keys memhost keeps up to date, in order.
var countKeys = []string{"observations", "sessions", "successRate", "updated"}

// setCounts rewrites the count lines of a skill page's frontmatter, and
// nothing else; updated changes only with a count.
func setCounts(page string, sk memhost.Skill, today string) string {
	fm, body := markdown.SplitFrontmatter(page)
	if fm == "" {
		return page // no frontmatter: a person made it theirs
	}
	vals := map[string]string{"observations": strconv.Itoa(sk.Observations), "sessions": strconv.Itoa(sk.Sessions),
		"successRate": strconv.FormatFloat(sk.SuccessRate, 'f', -1, 64)}
	lines := strings.SplitAfter(fm, "\n")
	same := true
	for i, l := range lines {
		k, v, ok := strings.Cut(strings.TrimRight(l, "\n"), ":")
		if want, mine := vals[k]; ok && mine && strings.TrimSpace(v) != want {
			lines[i], same = k+": "+want+"\n", false
		}
	}
	if same {
		return page
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "updated:") {
			lines[i] = "updated: " + today + "\n"
		}
	}
	return strings.Join(lines, "") + body
}

// newPage is a proposed skill's page: frontmatter, the steps, and the
// tasks it was seen in (the last five).
func newPage(p pattern, sk memhost.Skill, today string, loc *time.Location) string {
	var b strings.Builder
	tools, _ := yaml.Marshal(sk.Tools)
	name, _ := yaml.Marshal(sk.Name)
	fmt.Fprintf(&b, "---\nname: %sslug: %s\nstatus: %s\ntools:\n  %s\n", name, sk.Slug, memhost.SkillProposed, strings.ReplaceAll(strings.TrimSpace(string(tools)), "\n", "\n  "))
	fmt.Fprintf(&b, "observations: %d\nsessions: %d\nsuccessRate: %s\ncreated: %s\nupdated: %s\ngenerated: memhost\n---\n\n", sk.Observations, sk.Sessions,
		strconv.FormatFloat(sk.SuccessRate, 'f', -1, 64), today, today)
	fmt.Fprintf(&b, "# %s\n\nA tool sequence agents ran %d times in %d sessions, %.0f%% of them without a failed tool. Proposed by memhost: accept it (`memhost skills accept %s`) or reject it; edit it freely.\n\n## Steps\n\n",
		sk.Name, sk.Observations, sk.Sessions, 100*sk.SuccessRate, sk.Slug)
	for i, t := range sk.Tools {
		fmt.Fprintf(&b, "%d. %s\n", i+1, t)
	}
	b.WriteString("\n## Seen in\n\n")
	for _, o := range p.obs[max(0, len(p.obs)-5):] {
		when := o.at
		if t, ok := sessions.TurnTime(o.at, loc); ok {
			when = t.In(loc).Format("2006-01-02 15:04")
		}
		task := strings.Join(strings.Fields(o.context), " ")
		if r := []rune(task); len(r) > 120 {
			task = string(r[:120]) + "…"
		}
		fmt.Fprintf(&b, "- session %s, %s: %q\n", o.session, when, task)
	}
	return b.String()
}

// SkillReview sets a skill page's status: accepted, rejected, or back to
// proposed. The page must exist (SkillLearn writes it).
func (s *SkillService) SkillReview(ctx context.Context, req memhost.SkillReviewRequest) (resp memhost.SkillReviewResponse, err error) {
	if !slices.Contains([]string{memhost.SkillAccepted, memhost.SkillRejected, memhost.SkillProposed}, req.Status) {
		return resp, fault.BadInputf("status", "status %q: choose accepted, rejected or proposed", req.Status)
	}
	if req.Slug == "" || nonSlug.MatchString(strings.ReplaceAll(req.Slug, "-", "")) {
		return resp, fault.BadInputf("slug", "slug %q: a skill's slug is lowercase letters, digits and '-'", req.Slug)
	}
	rel := path.Join(Dir, req.Slug+".md")
	err = s.k.Notebook().Update(ctx, rel, func(old []byte, exists bool) ([]byte, error) {
		if !exists {
			return nil, fault.Errorf(fault.NotFound, "slug", "no skill %q (no %s; memhost skills lists them)", req.Slug, rel)
		}
		page, ok := setStatus(string(old), req.Status)
		if !ok {
			return nil, fault.BadInputf("slug", "%s has no frontmatter to hold a status", rel)
		}
		if page == string(old) {
			return nil, notebook.ErrUnchanged
		}
		return []byte(page), nil
	})
	if err != nil && !errors.Is(err, notebook.ErrUnchanged) {
		return resp, err
	}
	s.k.IndexWritten(ctx, rel) // a page the index missed is found by the next sync
	list, err := s.list(ctx, nil)
	if err != nil {
		return resp, err
	}
	for _, sk := range list.Skills {
		if sk.Slug == req.Slug {
			resp.Skill = sk
		}
	}
	if resp.Skill.Slug == "" { // its sequence no longer in the transcripts
		f, _, _ := s.page(req.Slug)
		resp.Skill = memhost.Skill{Name: f.Name, Slug: req.Slug, Path: rel, Status: req.Status, Tools: f.Tools, Created: f.Created}
	}
	return resp, nil
}

// setStatus sets the status line of a page's frontmatter (adding one
// when it has none); ok is false for a page without frontmatter.
func setStatus(page, status string) (string, bool) {
	fm, body := markdown.SplitFrontmatter(page)
	if fm == "" {
		return page, false
	}
	lines := strings.SplitAfter(fm, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "status:") {
			lines[i] = "status: " + status + "\n"
			return strings.Join(lines, "") + body, true
		}
	}
	lines = slices.Insert(lines, 1, "status: "+status+"\n")
	return strings.Join(lines, "") + body, true
}
