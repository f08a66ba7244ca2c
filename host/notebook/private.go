package notebook

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/memhost/memhost/host/markdown"
)

// PrivateFolder holds pages that never leave the machine.
const PrivateFolder = "private"

// IsPrivate reports whether the page rel (notebook-relative) with bytes
// data is private: under PrivateFolder, or with private: true in its
// frontmatter. A private page is searchable here and never committed,
// pushed or exported.
func IsPrivate(rel string, data []byte) bool {
	if top, _, ok := strings.Cut(rel, "/"); ok && top == PrivateFolder {
		return true
	}
	lines := strings.Split(string(data), "\n")
	n := markdown.FrontmatterLines(lines)
	if n < 2 {
		return false
	}
	var fm struct {
		Private bool `yaml:"private"`
	}
	return yaml.Unmarshal([]byte(strings.ReplaceAll(strings.Join(lines[1:n-1], "\n"), "\r", "")), &fm) == nil && fm.Private
}
