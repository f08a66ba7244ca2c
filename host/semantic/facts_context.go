package semantic

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/facts"
	"github.com/memhost/memhost/index/factrows"
	"github.com/memhost/memhost/knowledge"
)

// ContextFacts appends to the context block the current facts of the
// most-mentioned entities (the most relations pointing at them, then the
// most current facts, then by name), whole entities only, within
// memory.prompt.maxFactsChars; 0 adds nothing, and so does a notebook
// without entity pages.
func (s *FactService) ContextFacts(ctx context.Context, b memhost.ContextResponse) (memhost.ContextResponse, error) {
	budget := s.k.Config().Memory.Prompt.MaxFactsChars
	if budget <= 0 {
		return b, nil
	}
	var ents []knowledge.EntityRow
	err := s.k.WithIndex(ctx, func() error {
		if err := s.k.SyncBeforeSearch(ctx); err != nil {
			return err
		}
		var err error
		ents, err = s.k.Index().Facts().Entities(ctx)
		return err
	})
	if err != nil {
		return b, err
	}
	ents = slices.DeleteFunc(ents, func(e knowledge.EntityRow) bool { return e.Current == 0 })
	if len(ents) == 0 {
		return b, nil
	}
	slices.SortStableFunc(ents, func(x, y knowledge.EntityRow) int {
		return cmp.Or(-cmp.Compare(x.Mentions, y.Mentions), -cmp.Compare(x.Current, y.Current), cmp.Compare(x.Slug, y.Slug))
	})
	var out strings.Builder
	out.WriteString("\n## Facts\n")
	used, left, misses := 0, 0, 0
	for i, e := range ents {
		// Each line of an entity is at least its attribute, ": " and
		// "- ": an entity that cannot fit is not read.
		if used+len(e.Title)+8+e.Current*5 > budget {
			left++
			continue
		}
		if used >= budget-minUsefulFacts {
			left += len(ents) - i
			break
		}
		var rows []knowledge.FactRow
		if err := s.k.WithIndex(ctx, func() (err error) {
			rows, err = s.k.Index().Facts().List(ctx, factrows.Query{Entity: e.Slug})
			return err
		}); err != nil {
			return b, err
		}
		block := entityBlock(e, rows)
		n := utf8.RuneCountInString(block)
		if used+n > budget {
			left++
			if misses++; misses == maxContextMisses {
				left += len(ents) - i - 1
				break
			}
			continue
		}
		used += n
		out.WriteString(block)
		b.Files = append(b.Files, memhost.ContextFile{Path: e.Path, Chars: n})
	}
	if used == 0 {
		out.WriteString("\n(no entity's facts fit in memory.prompt.maxFactsChars; list them with `memhost facts`)\n")
	} else if left > 0 {
		fmt.Fprintf(&out, "\n[… %d more entities left out: the facts are limited to %d characters; list them with `memhost entities`]\n", left, budget)
	}
	b.Text += out.String()
	return b, nil
}

// maxContextMisses: after this many entities read that did not fit, no
// more are tried (at 1,000 entities every one would be read).
const maxContextMisses = 10

// minUsefulFacts: with less room than this left, no more entities are
// tried.
const minUsefulFacts = 40

// entityBlock is one entity's current facts as context shows them.
func entityBlock(e knowledge.EntityRow, rows []knowledge.FactRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s (%s)\n\n", e.Title, e.Path)
	for _, f := range rows {
		conf := ""
		if f.Confidence != 1 {
			conf = " (confidence " + facts.FormatConfidence(f.Confidence) + ")"
		}
		fmt.Fprintf(&b, "- %s: %s%s\n", f.Attribute, f.Value, conf)
	}
	return b.String()
}
