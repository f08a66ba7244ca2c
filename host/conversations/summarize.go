package conversations

import (
	"context"
	"fmt"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/sdk"
)

// Compaction summaries written by the generator: the oldest turns into a
// few hundred tokens by a fast model.

const summarizer = `You write the compaction summary of a conversation between a user and an AI assistant. ` +
	`The summary replaces these turns in the assistant's working context, so keep what the assistant will need: ` +
	`decisions and their reasons, facts about the user and the people and things they mention, names, numbers, dates, ` +
	`open tasks and questions, and anything the assistant promised. Leave out greetings and small talk. ` +
	`Write short markdown bullet points, at most 300 words, with no preamble.`

const mergeSummaries = `You merge partial summaries of one conversation, oldest first, into one compaction summary. ` +
	`Keep every decision, fact, name, number, date, open task and promise; drop repetition. ` +
	`Write short markdown bullet points, at most 300 words, with no preamble.`

// Summary budgets, in tokens.
const (
	defaultSummaryInput = 24000 // transcript per request when the model's context is unknown
	summaryOutput       = 1024
	maxTurnTokens       = 4000 // a longer turn is cut to its start and end
)

// summarize has the generator write the summary of what a compaction of
// session would replace now, folding in the previous summary (which the
// new compaction replaces too). A transcript larger than the model takes
// is summarised in parts, then the parts merged.
func (cs *SessionService) summarize(ctx context.Context, session string) (summary, model string, last string, err error) {
	g, release, err := cs.k.Generator(ctx)
	defer release()
	if err != nil {
		return "", "", "", err
	}
	p, err := cs.k.Sessions().ToCompact(session, cs.k.Config().Memory.Compaction.KeepRecentTokens)
	if err != nil {
		return "", "", "", err
	}
	budget := defaultSummaryInput
	if info, err := g.Info(ctx); err == nil && info.MaxInputTokens > 0 {
		budget = max(info.MaxInputTokens*3/4-summaryOutput-500, 1000)
	}
	var parts []string
	var b strings.Builder
	used := 0
	if p.Previous != "" {
		fmt.Fprintf(&b, "Summary of the conversation before these turns:\n%s\n\nThe turns since:\n", p.Previous)
		used = chunk.EstimateTokens(b.String())
	}
	for _, t := range p.Turns {
		line := renderTurn(t)
		n := chunk.EstimateTokens(line)
		if used > 0 && used+n > budget {
			parts = append(parts, b.String())
			b.Reset()
			used = 0
		}
		b.WriteString(line)
		used += n
	}
	parts = append(parts, b.String())
	var summaries []string
	for _, part := range parts {
		resp, err := g.Complete(ctx, sdk.CompleteRequest{MaxTokens: summaryOutput, Messages: []sdk.Message{
			{Role: "system", Content: summarizer}, {Role: "user", Content: part}}})
		if err != nil {
			return "", "", "", generatorFault(err)
		}
		summaries = append(summaries, strings.TrimSpace(resp.Text))
		model = resp.Model
	}
	summary = summaries[0]
	if len(summaries) > 1 {
		var all strings.Builder
		for i, s := range summaries {
			fmt.Fprintf(&all, "Part %d:\n%s\n\n", i+1, s)
		}
		resp, err := g.Complete(ctx, sdk.CompleteRequest{MaxTokens: summaryOutput, Messages: []sdk.Message{
			{Role: "system", Content: mergeSummaries}, {Role: "user", Content: all.String()}}})
		if err != nil {
			return "", "", "", generatorFault(err)
		}
		summary = strings.TrimSpace(resp.Text)
	}
	return summary, model, p.Turns[len(p.Turns)-1].ID, nil
}

// renderTurn writes a turn as a line of the transcript the generator
// reads; a very long turn keeps its start and end.
func renderTurn(t memhost.Turn) string {
	who := t.Role
	if t.Speaker != "" {
		who += " (" + t.Speaker + ")"
	}
	if t.Type != "" && t.Type != "message" {
		who += " [" + t.Type + "]"
	}
	text := t.Content
	if chunk.EstimateTokens(text) > maxTurnTokens {
		r := []rune(text)
		keep := maxTurnTokens * 2 // about 4 characters a token, half at each end
		if len(r) > 2*keep {
			text = string(r[:keep]) + "\n[…]\n" + string(r[len(r)-keep:])
		}
	}
	stamp := ""
	if t.Timestamp != "" {
		stamp = "[" + t.Timestamp + "] "
	}
	return stamp + who + ": " + text + "\n"
}

// generatorFault gives a generator's failure a kind: the answer was
// unusable or the generator unavailable; an ended context stays itself.
func generatorFault(err error) error {
	if fault.KindOf(err) != fault.Internal {
		return err
	}
	return fault.Errorf(fault.Unavailable, "generator", "%w", err)
}
