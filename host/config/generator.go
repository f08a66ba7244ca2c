package config

import (
	"fmt"
	"strings"
)

// Generator chooses the text generation plugin used to route remembered
// text (remember --auto), write compaction summaries (session compact
// --summarize) and consolidate conversations into facts.
type Generator struct {
	// Plugin is the generator (memhost-generator-<plugin>): "openai" for
	// any OpenAI-compatible endpoint, "ollama", or a third-party one.
	// Default "": none, and what needs one says so.
	Plugin string `yaml:"plugin"`
	// Options holds each plugin's settings by plugin name, passed to its
	// Configure, e.g. {openai: {url: https://api.deepseek.com/v1, model:
	// deepseek-chat, apiKeyEnv: DEEPSEEK_API_KEY}}. The API key itself is
	// never an option: only the name of the variable holding it.
	Options map[string]map[string]string `yaml:"options"`
	// TimeoutMs bounds one use of the generator by memhost, the plugin's
	// own retries included. Default 120000.
	TimeoutMs int `yaml:"timeoutMs"`
	// ConsolidateEveryMin has memhost serve consolidate the conversations
	// into facts every so many minutes (with a plugin set). Default 0: never
	// on its own; memhost consolidate runs it by hand.
	ConsolidateEveryMin int `yaml:"consolidateEveryMin"`
}

// DefaultGenerator is the generator block's defaults.
func DefaultGenerator() Generator {
	return Generator{Options: map[string]map[string]string{}, TimeoutMs: 120000}
}

// secretish are option names that would hold a key itself: refused, so
// that no key is ever written to config.yaml.
var secretish = []string{"apikey", "api_key", "key", "token", "secret", "password"}

func (g Generator) validate() error {
	bad := func(key, msg string) error { return &Error{"config", key, 0, msg} }
	if g.Plugin != "" && (strings.ContainsAny(g.Plugin, `/\ `) || strings.HasPrefix(g.Plugin, ".")) {
		return bad("memory.generator.plugin", fmt.Sprintf("want a plugin name such as openai or ollama, got %q", g.Plugin))
	}
	if g.TimeoutMs < 1 {
		return bad("memory.generator.timeoutMs", fmt.Sprintf("must be at least 1, got %d", g.TimeoutMs))
	}
	if g.ConsolidateEveryMin < 0 {
		return bad("memory.generator.consolidateEveryMin", fmt.Sprintf("must be 0 (off) or a number of minutes, got %d", g.ConsolidateEveryMin))
	}
	for name, o := range g.Options {
		for k := range o {
			for _, s := range secretish {
				if strings.EqualFold(k, s) {
					return bad("memory.generator.options."+name+"."+k, "holds a secret: put the key in an environment variable and name it with apiKeyEnv")
				}
			}
		}
	}
	return nil
}

func cloneOptions(in map[string]map[string]string) map[string]map[string]string {
	opts := make(map[string]map[string]string, len(in))
	for name, o := range in {
		m := make(map[string]string, len(o))
		for k, v := range o {
			m[k] = v
		}
		opts[name] = m
	}
	return opts
}
