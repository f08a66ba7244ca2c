package config

import (
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Given reports whether the user chose key (dotted, e.g. server.listen)
// in the config file at path or through its environment variable, rather
// than leaving it to Default. A value equal to the default counts: what
// matters is that someone asked for it. A file that cannot be read or
// parsed gives nothing (Load reports it).
func Given(path string, getenv func(string) string, key string) bool {
	if getenv != nil && getenv(EnvName(key)) != "" {
		return true
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return false
	}
	n := doc.Content[0]
	for _, part := range strings.Split(key, ".") {
		if n = lookup(n, part); n == nil {
			return false
		}
	}
	return true
}

// lookup is the value of name in mapping n, nil when it has none.
func lookup(n *yaml.Node, name string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			return n.Content[i+1]
		}
	}
	return nil
}
