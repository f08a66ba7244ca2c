package config

import (
	"strings"
	"testing"
)

func TestGeneratorKeys(t *testing.T) {
	t.Parallel()
	good := "memory:\n  generator:\n    plugin: openai\n    options:\n      openai: {url: \"https://api.deepseek.com/v1\", model: deepseek-chat, apiKeyEnv: DEEPSEEK_API_KEY}\n    timeoutMs: 5000\n    consolidateEveryMin: 30\n"
	cfg := Default()
	if err := Parse(strings.NewReader(good), &cfg, "config.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g := cfg.Memory.Generator
	if g.Plugin != "openai" || g.Options["openai"]["model"] != "deepseek-chat" || g.TimeoutMs != 5000 || g.ConsolidateEveryMin != 30 {
		t.Errorf("parsed %+v", g)
	}
	c := cfg.Clone()
	c.Memory.Generator.Options["openai"]["model"] = "changed"
	if cfg.Memory.Generator.Options["openai"]["model"] != "deepseek-chat" {
		t.Error("Clone shares the generator's options")
	}
	for _, tt := range []struct{ yaml, want string }{
		{"memory:\n  generator:\n    plugn: openai\n", "config.yaml line 3: memory.generator.plugn: unknown key"},
		{"memory:\n  generator:\n    model: gpt\n", "memory.generator.model: unknown key"},
		{"memory:\n  generator:\n    plugin: ../x\n", `memory.generator.plugin: want a plugin name such as openai or ollama, got "../x"`},
		{"memory:\n  generator:\n    timeoutMs: 0\n", "memory.generator.timeoutMs: must be at least 1, got 0"},
		{"memory:\n  generator:\n    consolidateEveryMin: -5\n", "memory.generator.consolidateEveryMin: must be 0 (off) or a number of minutes, got -5"},
		{"memory:\n  generator:\n    options: {openai: {apiKey: sk-123}}\n", "memory.generator.options.openai.apiKey: holds a secret: put the key in an environment variable and name it with apiKeyEnv"},
	} {
		cfg := Default()
		err := Parse(strings.NewReader(tt.yaml), &cfg, "config.yaml")
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.yaml, err, tt.want)
		}
	}
}
