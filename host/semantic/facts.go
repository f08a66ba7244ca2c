package semantic

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/facts"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/once"
	"github.com/memhost/memhost/host/secrets"
	"github.com/memhost/memhost/index/factrows"
	"github.com/memhost/memhost/index/ftstext"
	"github.com/memhost/memhost/knowledge"
	"github.com/memhost/memhost/sdk"
)

// NearDuplicate is the cosine similarity at or above which a new fact
// restates a current fact of the same entity and supersedes it.
const NearDuplicate = 0.85

// FactAdd adds a fact to its entity's page (knowledge/entities/SLUG.md,
// made when missing) and indexes the page before returning. A current
// value of the same attribute is superseded (unless Keep; an equal one is
// confirmed instead), and so is a current fact of the entity whose
// embedding has a cosine similarity of NearDuplicate or more with the new
// one's, when an embeddings provider is ready.
func (s *FactService) FactAdd(ctx context.Context, req knowledge.FactAddRequest) (out knowledge.FactAddResponse, err error) {
	return s.factAdd(ctx, req, addOptions{})
}

// sourceMarkers writes the redaction markers of a fact's source in
// parentheses: a source holds no brackets (facts.CheckSource), and the
// marker's would make the fact unwritable.
func sourceMarkers(text string, red []knowledge.Redaction) string {
	for _, r := range red {
		m := secrets.Marker(secrets.Finding{Rule: r.Rule, Fingerprint: r.Fingerprint})
		text = strings.ReplaceAll(text, m, "("+m[1:len(m)-1]+")")
	}
	return text
}

// addOptions are what consolidation sets that fact add does not.
type addOptions struct {
	day         string // the fact's date; "" for today
	onlyIfNewer bool   // see facts.Addition.OnlyIfNewer
}

func (s *FactService) factAdd(ctx context.Context, req knowledge.FactAddRequest, opt addOptions) (knowledge.FactAddResponse, error) {
	// A secret in a value or a source is redacted as in any write, and
	// the response says so.
	var redacted []knowledge.Redaction
	for _, f := range []struct {
		name string
		text *string
	}{{"value", &req.Value}, {"source", &req.Source}} {
		text, red, err := s.k.Redact(f.name, *f.text)
		if err != nil {
			return knowledge.FactAddResponse{}, err
		}
		if f.name == "source" {
			text = sourceMarkers(text, red)
		}
		*f.text, redacted = text, append(redacted, red...)
	}
	if err := facts.CheckAttribute(req.Attribute); err != nil {
		return knowledge.FactAddResponse{}, fault.BadInputf("attribute", "attribute %q: %v", notebook.Shorten(req.Attribute, 60), err)
	}
	if err := facts.CheckValue(req.Value); err != nil {
		return knowledge.FactAddResponse{}, fault.BadInputf("value", "value %q: %v", notebook.Shorten(req.Value, 60), err)
	}
	if err := facts.CheckSource(req.Source); err != nil {
		return knowledge.FactAddResponse{}, fault.BadInputf("source", "source %q: %v", notebook.Shorten(req.Source, 60), err)
	}
	if req.Confidence < 0 || req.Confidence > 1 || math.IsNaN(req.Confidence) {
		return knowledge.FactAddResponse{}, fault.BadInputf("confidence", "confidence must be between 0 and 1, got %g", req.Confidence)
	}
	slug, name, err := s.resolveEntity(ctx, req.Entity, true)
	if err != nil {
		return knowledge.FactAddResponse{}, err
	}
	rel, err := s.k.Notebook().Clean(facts.Path(slug))
	if err != nil {
		return knowledge.FactAddResponse{}, err
	}
	day := opt.day
	if day == "" {
		day = s.k.Now().In(s.k.Location()).Format(facts.Date)
	}
	resp := knowledge.FactAddResponse{Path: rel, Entity: slug, Superseded: []knowledge.Fact{}, Redacted: redacted}

	// Near-duplicates: embedded before the page is locked (a provider
	// may take seconds to start); their ids are checked again under the
	// lock, where a fact gone meanwhile is simply not superseded.
	var replace []string
	if data, err := s.k.Notebook().Read(rel); err == nil {
		resp.NearDups, resp.Similarity = s.nearDuplicates(ctx, facts.Parse(slug, data), req)
		for _, d := range resp.NearDups {
			replace = append(replace, d.ID)
		}
	} else if !errors.Is(err, notebook.ErrNotFound) {
		return knowledge.FactAddResponse{}, err
	} else {
		resp.Similarity = "a new entity: nothing to compare with"
	}
	add := facts.Addition{Attribute: strings.TrimSpace(req.Attribute), Value: req.Value, Source: req.Source,
		Confidence: req.Confidence, Keep: req.Keep, Replace: replace, OnlyIfNewer: opt.onlyIfNewer}
	_, _, err = s.k.Once().Update(ctx, once.Request{Op: api.OpFactAdd.Name, ID: req.RequestID, Resp: &resp}, rel, func(old []byte, exists bool) ([]byte, error) {
		resp.Created = !exists
		var p *facts.Page
		if exists {
			p = facts.Parse(slug, old)
		} else {
			p = facts.New(slug, name, day)
		}
		o, err := p.Add(add, day)
		if err != nil {
			return nil, fault.BadInputf("value", "%v", err)
		}
		resp.Fact, resp.Confirmed, resp.Stale, resp.Superseded = o.Fact, o.Confirmed, o.Stale, append(resp.Superseded, o.Superseded...)
		if o.Stale {
			return nil, notebook.ErrUnchanged
		}
		return p.Bytes(), nil
	})
	if resp.Stale {
		return resp, nil
	}
	if err != nil {
		return knowledge.FactAddResponse{}, err
	}
	resp.Warnings = s.k.IndexWritten(ctx, rel)
	return resp, nil
}

// nearDuplicates embeds the new fact and the entity's current facts that
// the attribute rule leaves alone, and returns those at NearDuplicate or
// above. The string says why none were looked for ("" when they were).
func (s *FactService) nearDuplicates(ctx context.Context, p *facts.Page, req knowledge.FactAddRequest) ([]knowledge.NearDup, string) {
	key, vkey := facts.AttrKey(req.Attribute), facts.ValueKey(req.Value)
	var cands []knowledge.Fact
	for _, f := range p.Facts {
		if f.Status != facts.Current {
			continue
		}
		same := facts.AttrKey(f.Attribute) == key
		if same && facts.ValueKey(f.Value) == vkey {
			return nil, "the value is already current"
		}
		if same && !req.Keep {
			continue // superseded anyway
		}
		cands = append(cands, f)
	}
	if len(cands) == 0 {
		return nil, "no other current facts to compare with"
	}
	sem, err := s.k.Queue().Ready(ctx)
	if err != nil {
		return nil, "not compared by meaning: " + err.Error()
	}
	defer sem.Release()
	title := p.Meta.Title
	if title == "" {
		title = p.Slug
	}
	texts := []string{factText(title, req.Attribute, req.Value)}
	for _, f := range cands {
		texts = append(texts, factText(title, f.Attribute, f.Value))
	}
	timeout := time.Duration(s.k.Config().Memory.Embedding.QueryTimeoutMs) * time.Millisecond
	vecs, err := sem.Provider.EmbedWithin(ctx, texts, sdk.KindDocument, max(timeout, 10*time.Second))
	if err != nil {
		return nil, "not compared by meaning: " + err.Error()
	}
	var out []knowledge.NearDup
	for i, f := range cands {
		if c := cosine(vecs[0], vecs[i+1]); c >= NearDuplicate {
			out = append(out, knowledge.NearDup{ID: f.ID, Cosine: math.Round(c*1000) / 1000})
		}
	}
	return out, ""
}

// factText is what a fact's embedding is made from: a sentence about the
// entity, "Sarah Chen works at: [[acme-corp]]".
func factText(entity, attr, value string) string { return entity + " " + attr + ": " + value }

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range min(len(a), len(b)) {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// resolveEntity finds the slug of an entity named by its slug, title or
// an alias (any case). With create, an unknown name gives its own slug
// and the name as the new page's title; without, it is not found.
func (s *FactService) resolveEntity(ctx context.Context, name string, create bool) (slug, title string, err error) {
	name = strings.TrimSpace(name)
	if strings.ContainsAny(name, "\r\n\x00") {
		return "", "", fault.BadInputf("entity", "entity %q: the name must be one line", notebook.Shorten(name, 60))
	}
	slug = facts.Slug(strings.TrimSuffix(name, ".md"))
	if slug == "" {
		return "", "", fault.BadInputf("entity", "entity %q: the name holds no letter or digit", notebook.Shorten(name, 60))
	}
	if err := notebook.CheckName(slug); err != nil {
		return "", "", fault.BadInputf("entity", "entity %q: %v", notebook.Shorten(name, 60), err)
	}
	if s.k.PageExists(facts.Path(slug)) {
		return slug, name, nil
	}
	if err := s.k.WithIndex(ctx, func() error { return s.k.SyncBeforeSearch(ctx) }); err != nil {
		return "", "", err
	}
	ents, err := s.k.Index().Facts().Entities(ctx)
	if err != nil {
		return "", "", err
	}
	for _, e := range ents {
		if strings.EqualFold(e.Title, name) || facts.Slug(e.Title) == slug {
			return e.Slug, e.Title, nil
		}
		for _, a := range e.Aliases {
			if strings.EqualFold(a, name) || facts.Slug(a) == slug {
				return e.Slug, e.Title, nil
			}
		}
	}
	if !create {
		return "", "", fault.Errorf(fault.NotFound, "entity", "no entity %q (no %s, and no page has it as title or alias)", name, facts.Path(slug))
	}
	return slug, name, nil
}

// Facts lists the current facts (with History, every fact) of an entity,
// or of all, from the index (brought up to date first).
func (s *FactService) Facts(ctx context.Context, req knowledge.FactsRequest) (knowledge.FactsResponse, error) {
	resp := knowledge.FactsResponse{Facts: []knowledge.FactRow{}}
	if req.Entity != "" {
		slug, _, err := s.resolveEntity(ctx, req.Entity, false)
		if err != nil {
			return resp, err
		}
		resp.Entity = slug
	}
	err := s.k.WithIndex(ctx, func() error {
		if err := s.k.SyncBeforeSearch(ctx); err != nil {
			return err
		}
		var err error
		resp.Facts, err = s.k.Index().Facts().List(ctx, factrows.Query{Entity: resp.Entity, History: req.History})
		return err
	})
	return resp, err
}

// FactForget strikes facts through on their page, marked forgotten with
// today's date: the line stays as the audit trail, and the fact is no
// longer current (recall, context and facts leave it out).
func (s *FactService) FactForget(ctx context.Context, req knowledge.FactForgetRequest) (out knowledge.FactForgetResponse, err error) {
	var slug string
	switch {
	case req.ID != "" && req.Attribute == "":
		id := strings.TrimPrefix(strings.TrimSpace(req.ID), "^")
		if req.Entity != "" {
			if slug, _, err = s.resolveEntity(ctx, req.Entity, false); err != nil {
				return knowledge.FactForgetResponse{}, err
			}
		}
		rows, err := s.factsByID(ctx, id, slug)
		if err != nil {
			return knowledge.FactForgetResponse{}, err
		}
		switch {
		case len(rows) == 0:
			return knowledge.FactForgetResponse{}, fault.Errorf(fault.NotFound, "id", "no fact %q (memhost facts lists the ids)", req.ID)
		case len(rows) > 1:
			return knowledge.FactForgetResponse{}, fault.Errorf(fault.Conflict, "id", "fact id %q is on %d pages; name the entity too", req.ID, len(rows))
		}
		slug = rows[0].Entity
		req.ID = id
	case req.Entity != "" && req.Attribute != "" && req.ID == "":
		if slug, _, err = s.resolveEntity(ctx, req.Entity, false); err != nil {
			return knowledge.FactForgetResponse{}, err
		}
	default:
		return knowledge.FactForgetResponse{}, fault.BadInputf("id", "name a fact by its id, or an entity and an attribute (and a value)")
	}
	rel, err := s.k.Notebook().Clean(facts.Path(slug))
	if err != nil {
		return knowledge.FactForgetResponse{}, err
	}
	day := s.k.Now().In(s.k.Location()).Format(facts.Date)
	resp := knowledge.FactForgetResponse{Path: rel, Forgotten: []knowledge.Fact{}}
	_, _, err = s.k.Once().Update(ctx, once.Request{Op: api.OpFactForget.Name, ID: req.RequestID, Resp: &resp}, rel, func(old []byte, exists bool) ([]byte, error) {
		if !exists {
			return nil, fault.Errorf(fault.NotFound, "entity", "no page %s", rel)
		}
		p := facts.Parse(slug, old)
		var ids []string
		if req.ID != "" {
			ids = []string{req.ID}
		} else {
			for _, f := range p.Facts {
				if f.Status == facts.Current && facts.AttrKey(f.Attribute) == facts.AttrKey(req.Attribute) &&
					(req.Value == "" || facts.ValueKey(f.Value) == facts.ValueKey(req.Value)) {
					ids = append(ids, f.ID)
				}
			}
			if len(ids) == 0 {
				what := req.Attribute
				if req.Value != "" {
					what += " = " + req.Value
				}
				return nil, fault.Errorf(fault.NotFound, "attribute", "%s has no current fact %q", slug, what)
			}
		}
		for _, id := range ids {
			f, err := p.Forget(id, day)
			switch {
			case errors.Is(err, facts.ErrNoFact):
				return nil, fault.Errorf(fault.NotFound, "id", "no fact %q on %s (the page changed?)", id, rel)
			case errors.Is(err, facts.ErrNotCurrent):
				return nil, fault.Errorf(fault.Conflict, "id", "fact %s of %s is already %s", id, slug, f.Status)
			case err != nil:
				return nil, err
			}
			resp.Forgotten = append(resp.Forgotten, f)
		}
		return p.Bytes(), nil
	})
	if err != nil {
		return knowledge.FactForgetResponse{}, err
	}
	resp.Warnings = s.k.IndexWritten(ctx, rel)
	return resp, nil
}

func (s *FactService) factsByID(ctx context.Context, id, slug string) ([]knowledge.FactRow, error) {
	var all []knowledge.FactRow
	err := s.k.WithIndex(ctx, func() error {
		if err := s.k.SyncBeforeSearch(ctx); err != nil {
			return err
		}
		var err error
		all, err = s.k.Index().Facts().List(ctx, factrows.Query{Entity: slug, History: true})
		return err
	})
	var out []knowledge.FactRow
	for _, f := range all {
		if f.FactID == id {
			out = append(out, f)
		}
	}
	return out, err
}

// Entities lists the entity pages with their fact and relation counts.
func (s *FactService) Entities(ctx context.Context, _ knowledge.EntitiesRequest) (knowledge.EntitiesResponse, error) {
	var resp knowledge.EntitiesResponse
	err := s.k.WithIndex(ctx, func() error {
		if err := s.k.SyncBeforeSearch(ctx); err != nil {
			return err
		}
		var err error
		resp.Entities, err = s.k.Index().Facts().Entities(ctx)
		return err
	})
	return resp, err
}

// Relations lists the relations out of and into an entity. An entity
// that only other pages link to (no page of its own) has relations in.
func (s *FactService) Relations(ctx context.Context, req knowledge.RelationsRequest) (knowledge.RelationsResponse, error) {
	slug, _, err := s.resolveEntity(ctx, req.Entity, true)
	if err != nil {
		return knowledge.RelationsResponse{}, err
	}
	resp := knowledge.RelationsResponse{Entity: slug}
	err = s.k.WithIndex(ctx, func() error {
		if err := s.k.SyncBeforeSearch(ctx); err != nil {
			return err
		}
		var err error
		if resp.Out, err = s.k.Index().Facts().Relations(ctx, slug, false); err != nil {
			return err
		}
		resp.In, err = s.k.Index().Facts().Relations(ctx, slug, true)
		return err
	})
	if err == nil && len(resp.Out)+len(resp.In) == 0 && !s.k.PageExists(facts.Path(slug)) {
		return resp, fault.Errorf(fault.NotFound, "entity", "no entity %q (no %s, and no page links to it)", req.Entity, facts.Path(slug))
	}
	return resp, err
}

// SearchFacts is recall's FACTS group: current facts matching the query,
// best first, at most limit, none below minScore.
func (s *FactService) SearchFacts(ctx context.Context, query string, limit int, minScore float64) ([]knowledge.FactRow, error) {
	rows, err := s.k.Index().Facts().Search(ctx, query, limit)
	if errors.Is(err, ftstext.ErrNoTerms) {
		return []knowledge.FactRow{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("facts: %w", err)
	}
	out := rows[:0]
	for _, r := range rows {
		if r.Score >= minScore {
			out = append(out, r)
		}
	}
	return out, nil
}
