// Package secretsample holds published sample secrets for tests — true
// positives of gitleaks' own rule definitions, not live credentials — and
// a search of a home for their bytes.
package secretsample

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The samples, each with the rule that finds it.
const (
	AWS    = "AKIALALEMEL33243OLIB"                                     // aws-access-token
	GitHub = "ghp_R8wK3mZp5VtQ9xLc2HbN7jYf4sDg6aWe1uTo"                 // github-pat
	Slack  = "xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD" // slack-bot-token
	// URLPassword is a password for a URL's user information
	// ("postgres://app:hunter2x@db/"): memhost's url-password rule.
	URLPassword = "hunter2x"
)

// All are the samples.
var All = []string{AWS, GitHub, Slack, URLPassword}

// Holding lists the files under root (relative to it) whose bytes hold
// secret, whatever they are: pages, transcripts, the index, journals.
func Holding(root, secret string) []string {
	var found []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(secret)) {
			found = append(found, strings.TrimPrefix(p, root))
		}
		return nil
	})
	return found
}
