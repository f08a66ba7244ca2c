package host

import (
	"fmt"
	"sync"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/secrets"
)

// redactor hands out the process's secret scanner, built on the first
// write that needs it (about 45 ms and 14 MB: gitleaks compiles its
// rules), so that a process that only reads never pays for it, and one
// that opens several homes (tests, a Host reopened) pays once: the
// Scanner is safe for concurrent use (secrets' TestScanConcurrent).
type redactor struct{}

// processScanner is the one Scanner of the process.
var processScanner = sync.OnceValues(secrets.New)

func (redactor) scanner() (*secrets.Scanner, error) { return processScanner() }

// redact applies memory.privacy.secrets to text, the request's field:
// under redact (the default) each secret found is replaced by its marker
// ("[secret redacted: aws-access-token …P4OW]") and listed; under
// keep-local and allow the text is kept as it is. The same text always
// gives the same result, so a retried write finds its first write.
func (h *Host) redact(field, text string) (string, []memhost.Redaction, error) {
	if text == "" || h.config().Memory.Privacy.Secrets != config.SecretsRedact {
		return text, nil, nil
	}
	s, err := h.secrets.scanner()
	if err != nil {
		return text, nil, fmt.Errorf("secret detection: %w", err)
	}
	out, found := s.Redact(text)
	if len(found) == 0 {
		return text, nil, nil
	}
	red := make([]memhost.Redaction, len(found))
	for i, f := range found {
		red[i] = memhost.Redaction{Field: field, Rule: f.Rule, Line: f.Line, Fingerprint: f.Fingerprint}
	}
	return out, red, nil
}

// findSecret reports the first secret in data, a file about to leave the
// machine (a git commit, an export), unless the policy is allow. A
// scanner that cannot be built holds the file back too: nothing leaves
// unchecked.
func (h *Host) findSecret(data []byte) (memhost.HeldBack, bool) {
	if h.config().Memory.Privacy.Secrets == config.SecretsAllow {
		return memhost.HeldBack{}, false
	}
	s, err := h.secrets.scanner()
	if err != nil {
		return memhost.HeldBack{Rule: "secret detection unavailable: " + err.Error()}, true
	}
	found := s.Scan(string(data))
	if len(found) == 0 {
		return memhost.HeldBack{}, false
	}
	return memhost.HeldBack{Rule: found[0].Rule, Line: found[0].Line, Fingerprint: found[0].Fingerprint}, true
}
