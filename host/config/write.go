package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/memhost/memhost/internal/fsx"
)

// SetPlugin makes plugin the active embeddings provider in the config file
// at path, with options merged into its options (an empty value removes a
// key). The rest of the file, comments included, is kept; a missing file
// starts from Template. The file is validated before it replaces the old
// one, which is left untouched on any error.
func SetPlugin(path, plugin string, options map[string]string) error {
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
	// A file of comments only (like the template) parses to nothing and
	// would lose them: keep its text and add the keys below it.
	var prefix []byte
	if doc.Kind == 0 || len(doc.Content) == 0 {
		prefix = append(bytes.TrimRight(data, "\n"), "\n\n"...)
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: the top level is not a mapping of keys", path)
	}
	emb := child(child(root, "memory"), "embedding")
	setScalar(emb, "plugin", plugin)
	opts := child(child(emb, "options"), plugin)
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if options[k] == "" {
			deleteKey(opts, k)
		} else {
			setScalar(opts, k, options[k])
		}
	}
	return writeChecked(path, prefix, &doc)
}

// writeChecked writes prefix and doc to path atomically and durably (a
// temporary file flushed and renamed over it, 0600), once the result parses and validates as a config: an
// edit that would break config.yaml is refused and the file left as it was.
func writeChecked(path string, prefix []byte, doc *yaml.Node) error {
	var buf bytes.Buffer
	buf.Write(prefix)
	if err := encode(&buf, doc); err != nil {
		return err
	}
	cfg := Default()
	if err := Parse(bytes.NewReader(buf.Bytes()), &cfg, path); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	return fsx.WriteFileAtomic(path, buf.Bytes(), 0o600)
}

// encode writes doc as YAML, every string quoted where yaml.v3's own
// choice of style would not read back as the same string: it writes
// "\nFlush now.\n" as a block scalar that reads back without its leading
// blank line (go-yaml/yaml#888), and "\tx\ny" as one that does not parse.
func encode(w io.Writer, doc *yaml.Node) error {
	quoteUnsafe(doc)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return enc.Close()
}

// quoteUnsafe gives a double-quoted style, which escapes every character,
// to each multi-line string under n whose style does not round-trip.
func quoteUnsafe(n *yaml.Node) {
	for _, c := range n.Content {
		quoteUnsafe(c)
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" || !strings.ContainsAny(n.Value, "\n\r") || n.Style&yaml.DoubleQuotedStyle != 0 {
		return
	}
	probe := *n
	probe.HeadComment, probe.LineComment, probe.FootComment = "", "", ""
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "k"}, &probe}})
	var back map[string]string
	if err != nil || yaml.Unmarshal(out, &back) != nil || back["k"] != n.Value {
		n.Style = yaml.DoubleQuotedStyle
	}
}

// child returns the mapping under key in m, creating it (or replacing a
// null or empty flow value) when needed.
func child(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind != yaml.MappingNode {
				*v = yaml.Node{Kind: yaml.MappingNode}
			}
			v.Style = 0 // block style, also for a former "{}"
			return v
		}
	}
	v := &yaml.Node{Kind: yaml.MappingNode}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	return v
}

func setScalar(m *yaml.Node, key, value string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Value: value, LineComment: m.Content[i+1].LineComment}
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &yaml.Node{Kind: yaml.ScalarNode, Value: value})
}

func deleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
