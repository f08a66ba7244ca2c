// Package secrets finds and redacts secrets (API keys, tokens, passwords,
// private keys) in text before memhost stores it.
//
// # Rules
//
// It uses the default rule set of gitleaks
// (github.com/zricethezav/gitleaks/v8, v8.30.1 as go.mod pins it): its
// 222 rules for provider keys and tokens (AWS, GitHub, Slack, Stripe,
// OpenAI, Anthropic, GCP, JWTs, ...), PEM private keys and a generic
// "key/token/password/secret = value" rule with an entropy threshold.
// Scan reports what those rules report, with three differences: a
// "gitleaks:allow" comment exempts nothing (in what an agent writes it
// would be a way to keep a secret), secrets are not searched for inside
// base64 or hex (a decoded secret has no bytes of its own to point at),
// and the findings of several rules on the same bytes are merged. One
// rule of memhost's own is added in gitleaks' format (urlPasswordRule): a
// password in a URL's user information ("postgres://app:hunter2@db/"),
// which no default rule knows; a placeholder there ("${DB_PASSWORD}",
// "****") is not a secret.
//
// What the rules do not know is not found: a short or low-entropy
// password in prose ("password: Tr0ub4dor&3") passes, and the generic rule does not see a
// value inside escaped quotes (`password = \"...\"` in the text of a
// JSON document): scan the decoded string instead.
//
// # Cost
//
// New compiles the rules: about 50 ms and 25 MB allocated, of which
// about 14 MB stays in use for the Scanner's life, so a process builds
// one Scanner and shares it. Scanning is regular-expression work that
// grows with the text and with how many rules its words wake (each rule
// runs only when one of its keywords occurs): about 0.4 ms for a 500-byte
// chat turn, most of it the generic rule, and 0.4 MB/s over notebook
// prose. gitleaks' other regular-expression engine (its gore2regex
// build tag, for the whole binary) scans about six times faster and
// makes New six times slower. Importing the package adds about 9 MB
// to a binary (gitleaks brings its archive readers) and 4 ms of
// package initialisation.
//
// # Concurrency
//
// A Scanner is safe for concurrent use: gitleaks' detector only reads its
// compiled rules while it scans, so one detector is shared, without a
// lock or a pool. New may be called from several goroutines; it holds a
// package lock while gitleaks reads its rules, because gitleaks does
// that through viper's process-wide instance.
//
// # Secrets never leave
//
// Nothing here logs or returns a secret's bytes: a Finding holds the
// rule, the line, the offsets of the secret in the caller's own text and
// a 4-character fingerprint of a hash of it, and Marker holds the same.
// New silences gitleaks' own logger for the process, since gitleaks
// logs a finding's secret at its trace level.
package secrets
