package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Federation configures sharing the home with other machines through git
// (`memhost git init`, `memhost sync --remote`, the loop of `memhost
// serve`). Commits are made once the home is a memhost repository, with
// or without a remote.
type Federation struct {
	// Remote is the git repository the home syncs with: a URL or a path.
	// Default "": no syncing (changes are still committed).
	Remote string `yaml:"remote"`
	// Branch is the remote branch. Default "main".
	Branch string `yaml:"branch"`
	// PushIntervalSec is how often `memhost serve` syncs (fetch, merge,
	// push); after failures it waits longer, doubling up to 15 minutes.
	// Default 60.
	PushIntervalSec int `yaml:"pushIntervalSec"`
	// CommitIntervalMs bounds commits under load: changes made within it
	// of the last commit wait and go into one commit. Default 2000.
	CommitIntervalMs int `yaml:"commitIntervalMs"`
	// Author is "Name <email>" of memhost's commits. Default "": memhost
	// <memhost@HOSTNAME>.
	Author string `yaml:"author"`
}

// DefaultFederation returns the defaults.
func DefaultFederation() Federation {
	return Federation{Branch: "main", PushIntervalSec: 60, CommitIntervalMs: 2000}
}

func (f Federation) validate() error {
	bad := func(key, msg string) error { return &Error{"config", "federation." + key, 0, msg} }
	switch {
	case strings.HasPrefix(f.Remote, "-") || strings.ContainsAny(f.Remote, "\n\r\x00"):
		return bad("remote", fmt.Sprintf("not a repository URL or path: %q", f.Remote))
	case !ValidBranch(f.Branch):
		return bad("branch", fmt.Sprintf("not a valid git branch name: %q", f.Branch))
	case f.PushIntervalSec < 1 || f.PushIntervalSec > 86400:
		return bad("pushIntervalSec", fmt.Sprintf("must be between 1 and 86400, got %d", f.PushIntervalSec))
	case f.CommitIntervalMs < 0 || f.CommitIntervalMs > 600000:
		return bad("commitIntervalMs", fmt.Sprintf("must be between 0 and 600000, got %d", f.CommitIntervalMs))
	case strings.ContainsAny(f.Author, "\n\r\x00"):
		return bad("author", "must be one line")
	case f.Author != "" && strings.Contains(f.Author, "<") && !strings.HasSuffix(strings.TrimSpace(f.Author), ">"):
		return bad("author", fmt.Sprintf("must be \"Name <email>\", got %q", f.Author))
	}
	return nil
}

// ValidBranch reports whether name is a branch name git accepts (the
// rules of git check-ref-format, checked without running git).
func ValidBranch(name string) bool {
	if name == "" || name == "@" || strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/") ||
		strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock") ||
		strings.Contains(name, "..") || strings.Contains(name, "//") || strings.Contains(name, "@{") {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// SetFederation sets federation.remote (and federation.branch, when not
// empty) in the config file at path, keeping the rest of the file; the
// file is validated before it replaces the old one.
func SetFederation(path, remote, branch string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		data, err = []byte(Template), nil
	}
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var prefix []byte
	if doc.Kind == 0 || len(doc.Content) == 0 {
		prefix = append(bytes.TrimRight(data, "\n"), "\n\n"...)
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: the top level is not a mapping of keys", path)
	}
	fed := child(root, "federation")
	setScalar(fed, "remote", remote)
	if branch != "" {
		setScalar(fed, "branch", branch)
	}
	for i := 0; i+1 < len(fed.Content); i += 2 { // a path or URL is always a string
		if v := fed.Content[i+1]; v.Kind == yaml.ScalarNode {
			if _, err := strconv.ParseFloat(v.Value, 64); err == nil || v.Value == "" || v.Value == "true" || v.Value == "false" || v.Value == "null" {
				if fed.Content[i].Value == "remote" || fed.Content[i].Value == "branch" {
					v.Style = yaml.DoubleQuotedStyle
				}
			}
		}
	}
	return writeChecked(path, prefix, &doc)
}
