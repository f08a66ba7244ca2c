package host

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memhost/memhost/host/facts"
	"github.com/memhost/memhost/host/prompt"
	"github.com/memhost/memhost/index"
)

// contextFacts appends to the context block the current facts of the
// most-mentioned entities (the most relations pointing at them, then the
// most current facts, then by name), whole entities only, within
// memory.prompt.maxFactsChars; 0 adds nothing, and so does a notebook
// without entity pages.
func (h *Host) contextFacts(ctx context.Context, b prompt.Block) (prompt.Block, error) {
	budget := h.config().Memory.Prompt.MaxFactsChars
	if budget <= 0 {
		return b, nil
	}
	var ents []index.EntityRow
	var rows []index.FactRow
	err := h.withIndex(ctx, func() error {
		if err := h.syncBeforeSearch(ctx); err != nil {
			return err
		}
		var err error
		if ents, err = h.idx.Entities(ctx); err != nil {
			return err
		}
		rows, err = h.idx.Facts(ctx, index.FactQuery{})
		return err
	})
	if err != nil {
		return b, err
	}
	byEntity := map[string][]index.FactRow{}
	for _, f := range rows {
		byEntity[f.Entity] = append(byEntity[f.Entity], f)
	}
	ents = slices.DeleteFunc(ents, func(e index.EntityRow) bool { return len(byEntity[e.Slug]) == 0 })
	if len(ents) == 0 {
		return b, nil
	}
	slices.SortStableFunc(ents, func(x, y index.EntityRow) int {
		return cmp.Or(-cmp.Compare(x.Mentions, y.Mentions), -cmp.Compare(x.Current, y.Current), cmp.Compare(x.Slug, y.Slug))
	})
	var out strings.Builder
	out.WriteString("\n## Facts\n")
	used, left := 0, 0
	for _, e := range ents {
		block := entityBlock(e, byEntity[e.Slug])
		n := utf8.RuneCountInString(block)
		if used+n > budget {
			left++
			continue
		}
		used += n
		out.WriteString(block)
		b.Files = append(b.Files, prompt.File{Path: e.Path, Chars: n})
	}
	if used == 0 {
		out.WriteString("\n(no entity's facts fit in memory.prompt.maxFactsChars; list them with `memhost facts`)\n")
	} else if left > 0 {
		fmt.Fprintf(&out, "\n[… %d more entities left out: the facts are limited to %d characters; list them with `memhost entities`]\n", left, budget)
	}
	b.Text += out.String()
	return b, nil
}

// entityBlock is one entity's current facts as context shows them.
func entityBlock(e index.EntityRow, rows []index.FactRow) string {
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
