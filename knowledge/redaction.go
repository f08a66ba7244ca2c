package knowledge

// Redaction is a secret found in what a write was given and replaced, in
// what was stored, by "[secret redacted: Rule …Fingerprint]"
// (memory.privacy.secrets: redact). It never holds the secret.
type Redaction struct {
	// Field is the request's field that held it ("text", "value").
	Field string `json:"field"`
	// Rule is the detection rule's id ("aws-access-token").
	Rule string `json:"rule"`
	// Line is the 1-based line of the field's text it started on.
	Line int `json:"line"`
	// Fingerprint is four characters of the secret's SHA-256: the same
	// secret always gives the same one.
	Fingerprint string `json:"fingerprint"`
}
