package sessions

import (
	"fmt"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
)

// Pending is what a compaction of a session would replace now.
type Pending struct {
	Turns      []memhost.Turn // the turns the summary replaces, oldest first
	Previous   string         // the last compaction's summary ("" when none): the new one replaces it too
	KeptTokens int            // recent turns left as they are
}

// ToCompact returns the turns a compaction would replace: those since
// the last compaction except the most recent keepRecent tokens. Nothing
// to replace is a fault.BadInput error naming the session.
func (s *Store) ToCompact(session string, keepRecent int) (Pending, error) {
	tr, err := s.Read(session)
	if err != nil {
		return Pending{}, err
	}
	var p Pending
	work := tr.Working()
	if len(work) > 0 && work[0].Type == "compaction" {
		p.Previous = work[0].Content
		work = work[1:]
	}
	keep, kept := len(work), 0
	for keep > 0 && kept+TurnTokens(work[keep-1]) <= keepRecent {
		keep--
		kept += TurnTokens(work[keep])
	}
	p.Turns, p.KeptTokens = work[:keep], kept
	if len(p.Turns) == 0 {
		return Pending{}, fault.BadInputf("session", "nothing to compact in %s: %s since the last compaction fit in keepRecentTokens (%d)", session, turns(len(work)), keepRecent)
	}
	return p, nil
}

// turns is "its 1 turn", "its 2 turns".
func turns(n int) string {
	if n == 1 {
		return "its 1 turn"
	}
	return fmt.Sprintf("its %d turns", n)
}
