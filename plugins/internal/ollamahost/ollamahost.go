// Package ollamahost reads OLLAMA_HOST as the ollama CLI does, for the
// plugins that talk to Ollama (embeddings and generation).
package ollamahost

import (
	"net"
	"net/url"
	"strings"
)

// URL turns OLLAMA_HOST ("0.0.0.0:11434", "myhost", "https://x") into
// a base URL, as the ollama CLI reads it.
func URL(h string) string {
	h = strings.TrimSpace(h)
	if h == "" {
		return "http://127.0.0.1:11434"
	}
	if !strings.Contains(h, "://") {
		h = "http://" + h
	}
	u, err := url.Parse(h)
	if err != nil {
		return "http://127.0.0.1:11434"
	}
	host, port := u.Hostname(), u.Port()
	if host == "" || host == "0.0.0.0" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "11434"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	u.Host = net.JoinHostPort(host, port)
	return strings.TrimRight(u.String(), "/")
}
