// Command fakeopenai serves internal/fakeopenai, the stand-in for an
// OpenAI-compatible chat endpoint the tests use, with answers scripted in a
// JSON file, for scripts/consolidate-demo.sh. It is not a model: each
// answer is the one the file gives for the first "match" string found in
// the request's messages (the nth request for a match gets its nth answer,
// the last one repeating), else {"facts": [], "relations": []}.
//
//	go run ./scripts/fakeopenai ANSWERS.json   # prints its base URL, serves until killed
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/memhost/memhost/internal/fakellm"
	"github.com/memhost/memhost/internal/fakeopenai"
)

type script []struct {
	Match   string   `json:"match"`
	Answers []string `json:"answers"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fakeopenai ANSWERS.json")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeopenai:", err)
		os.Exit(1)
	}
	var sc script
	if err := json.Unmarshal(b, &sc); err != nil {
		fmt.Fprintf(os.Stderr, "fakeopenai: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	var mu sync.Mutex
	seen := map[int]int{}
	srv := fakeopenai.New("", "scripted-stand-in")
	defer srv.Close()
	srv.SetAnswer(func(req fakellm.Request) string {
		var all strings.Builder
		for _, m := range req.Messages {
			if m.Role == "user" {
				all.WriteString(m.Content)
			}
		}
		for i, s := range sc {
			if strings.Contains(all.String(), s.Match) && len(s.Answers) > 0 {
				mu.Lock()
				n := seen[i]
				seen[i]++
				mu.Unlock()
				return s.Answers[min(n, len(s.Answers)-1)]
			}
		}
		return `{"facts": [], "relations": []}`
	})
	fmt.Println(srv.Base())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}
