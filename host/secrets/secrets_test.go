package secrets

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// The samples are true positives from gitleaks' own rule definitions
// (cmd/generate/config/rules/*.go in the module), fixed where gitleaks
// generates them at random. They are published test data, not live
// credentials.
const (
	awsKey     = "AKIALALEMEL33243OLIB"
	githubPAT  = "ghp_R8wK3mZp5VtQ9xLc2HbN7jYf4sDg6aWe1uTo"
	slackBot   = "xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD"
	stripeKey  = "sk_test_51OuEMLAlTWGaDypq4P5cuDHbuKeG4tAGPYHJpEXQ7zE8mKK3jkhTFPvCxnSSK5zB5EQZrJsYdsatNmAHGgb0vSKD00GTMSWRHs"
	openAIKey  = "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"
	gcpKey     = "AIzaSyNHxIf32IQ1a1yjl3ZJIqKZqzLAK1XhDk-"
	anthropic  = "sk-ant-api03-abc123xyz-456def789ghij-klmnopqrstuvwx-3456yza789bcde-1234fghijklmnopby56aaaogaopaaaabc123xyzAA"
	jwtToken   = "eyJhbGciOiJIUzI1NiJ9.eyJJc3N1ZXIiOiJJc3N1ZXIiLCJVc2VybmFtZSI6IkJhZFNlY3JldHMiLCJleHAiOjE1OTMxMzM0ODMsImlhdCI6MTQ2NjkwMzA4M30.ovqRikAo_0kKJ0GVrAwQlezymxrLGjcEiW_s3UJMMCo"
	slackHook  = "https://hooks.slack.com/services/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"
	genericPwd = "Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznB"
	rsaKey     = "-----BEGIN RSA PRIVATE KEY-----\n" +
		"MIIEpQIBAAKCAQEAn6/O8li+SX4m98LLYt/PKSzEmQ++ZBD7Loh9P13f4yQ92EF3\n" +
		"yxR5MsXFu9PRsrYQA7/4UTPHiC4y2sAVCBg4C2yyBpUEtMQjyCESi6Y=\n" +
		"-----END RSA PRIVATE KEY-----"
	pkcs8Key = "-----BEGIN PRIVATE KEY-----\n" +
		"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDAC4AWkdwKYSd8\n" +
		"Ks14IReLcYgADhoXk56ZzXI=\n" +
		"-----END PRIVATE KEY-----"
)

var (
	sharedOnce    sync.Once
	sharedScanner *Scanner
	sharedErr     error
)

// scanner returns one Scanner for the whole test run: New compiles
// hundreds of expressions.
func scanner(t testing.TB) *Scanner {
	t.Helper()
	sharedOnce.Do(func() { sharedScanner, sharedErr = New() })
	if sharedErr != nil {
		t.Fatalf("New: %v", sharedErr)
	}
	return sharedScanner
}

type sample struct {
	name, text, rule, secret string
}

// samples puts each secret where people and agents write one.
var samples = []sample{
	{"aws access key", "export AWS_ACCESS_KEY_ID=" + awsKey + "\n", "aws-access-token", awsKey},
	{"github pat", "I pushed with token " + githubPAT + ", revoke it later.", "github-pat", githubPAT},
	{"slack bot token", `"bot_token1": "` + slackBot + `"`, "slack-bot-token", slackBot},
	{"stripe key", "stripe.api_key = '" + stripeKey + "'", "stripe-access-token", stripeKey},
	{"openai key", "OPENAI_API_KEY=" + openAIKey, "openai-api-key", openAIKey},
	{"gcp api key", "maps key " + gcpKey + " in the config", "gcp-api-key", gcpKey},
	{"anthropic key", "ANTHROPIC_API_KEY=" + anthropic + "\n", "anthropic-api-key", anthropic},
	{"jwt", "curl -H 'X-Session: " + jwtToken + "' https://api.internal/", "jwt", jwtToken},
	{"slack webhook", "post alerts to " + slackHook + " please", "slack-webhook-url", slackHook},
	{"password assignment", "db password = \"" + genericPwd + "\"\n", "generic-api-key", genericPwd},
	{"rsa private key", "Here is the deploy key:\n\n" + rsaKey + "\n\nKeep it safe.\n", "private-key", rsaKey},
	{"pkcs8 private key", pkcs8Key, "private-key", pkcs8Key},
	// memhost's own rule (urlPasswordRule): gitleaks has none for a URL's
	// user information.
	{"url password", "the staging DB is postgres://app:hunter2x@db.staging.internal:5432/prod", "url-password", "hunter2x"},
	{"url password, quoted", `DATABASE_URL="mysql://root:S3cr3t!pw@10.0.0.5/app"`, "url-password", "S3cr3t!pw"},
}

func TestScanFindsSecrets(t *testing.T) {
	s := scanner(t)
	for _, c := range samples {
		t.Run(c.name, func(t *testing.T) {
			got := s.Scan(c.text)
			start := strings.Index(c.text, c.secret)
			want := []Finding{{
				Rule:        c.rule,
				Line:        1 + strings.Count(c.text[:start], "\n"),
				Fingerprint: fingerprint(c.secret),
				Start:       start,
				End:         start + len(c.secret),
			}}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("Scan(%q)\n got %+v\nwant %+v", c.text, got, want)
			}
		})
	}
}

func TestRedactReplacesSecretByMarker(t *testing.T) {
	s := scanner(t)
	for _, c := range samples {
		t.Run(c.name, func(t *testing.T) {
			got, fs := s.Redact(c.text)
			if len(fs) != 1 {
				t.Fatalf("Redact(%q) findings = %+v, want one", c.text, fs)
			}
			want := strings.Replace(c.text, c.secret, Marker(fs[0]), 1)
			if got != want {
				t.Fatalf("Redact(%q)\n got %q\nwant %q", c.text, got, want)
			}
			if !strings.Contains(got, "[secret redacted: "+c.rule+" …") {
				t.Fatalf("Redact(%q) = %q, want a %s marker", c.text, got, c.rule)
			}
		})
	}
}

func TestScanIgnoresOrdinaryText(t *testing.T) {
	s := scanner(t)
	for _, text := range []string{
		"The meeting moved to Thursday; bring the quarterly numbers.",
		"Fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 on main.",
		"commit 3f2a9c1e7b4d8f0a6c5e2b1d9f8a7c6e5d4b3a21\nAuthor: Ada <ada@example.org>",
		"request id 123e4567-e89b-12d3-a456-426614174000 failed twice",
		"See https://example.com/docs/getting-started?lang=en#install for setup.",
		"Logo: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
		"Call me on +1 (555) 123-4567 or 020 7946 0958.",
		"func main() {\n\tfmt.Println(\"hello, world\")\n}\n",
		"const apiVersion = \"v1\"\nvar keyName = \"primary\"",
		"The API key rotation happens monthly; tokens expire after 30 days.",
		"password: ${DB_PASSWORD}\napi_key: {{ .Values.apiKey }}",
		// URLs whose user information holds no password, or a placeholder.
		"DATABASE_URL=postgres://app:${DB_PASSWORD}@db/prod",
		"postgres://user:password@localhost/db and https://admin:****@host/ and redis://:<password>@cache:6379",
		"git clone ssh://git@github.com/ada/notes.git or https://ada@example.com/login",
		"see https://example.com/a:b@c and http://localhost:8080/status",
		"sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"Zürich, São Paulo, 東京 and Kraków are on the list.",
		"",
	} {
		if got := s.Scan(text); got != nil {
			t.Fatalf("Scan(%q) = %+v, want nothing", text, got)
		}
	}
}

func TestScanOffsets(t *testing.T) {
	s := scanner(t)
	crlfKey := strings.ReplaceAll(rsaKey, "\n", "\r\n")
	for _, c := range []struct {
		name, text, secret string
		line               int
	}{
		{"non-ascii before", "Grüße aus Köln — 東京 🚀 token " + githubPAT, githubPAT, 1},
		{"non-ascii lines before", "ünïcödé\n東京\n🚀🚀\nkey " + githubPAT + " ok", githubPAT, 4},
		{"crlf", "first\r\nsecond\r\n  AWS " + awsKey + "\r\nthird", awsKey, 3},
		{"crlf private key", "note:\r\n" + crlfKey + "\r\n", crlfKey, 2},
		{"private key after blank lines", "\n\n\n" + rsaKey, rsaKey, 4},
		{"at the very end", "x\ny " + awsKey, awsKey, 2},
		{"at the very start", awsKey + "\n", awsKey, 1},
		{"secret group after its key name", "héllo\npassword = \"" + genericPwd + "\"", genericPwd, 2},
		{"tab indented", "\t\t" + slackBot, slackBot, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := s.Scan(c.text)
			if len(got) != 1 {
				t.Fatalf("Scan(%q) = %+v, want one finding", c.text, got)
			}
			start := strings.Index(c.text, c.secret)
			if got[0].Start != start || got[0].End != start+len(c.secret) || got[0].Line != c.line {
				t.Fatalf("Scan(%q) = %+v, want Start %d End %d Line %d", c.text, got[0], start, start+len(c.secret), c.line)
			}
			if sec := c.text[got[0].Start:got[0].End]; sec != c.secret {
				t.Fatalf("text[Start:End] = %q, want %q", sec, c.secret)
			}
		})
	}
}

func TestScanSortsAndSeparates(t *testing.T) {
	s := scanner(t)
	text := "b: " + githubPAT + "\na: " + awsKey + "\n" + rsaKey + "\nz " + slackBot
	got := s.Scan(text)
	var rules []string
	for i, f := range got {
		rules = append(rules, f.Rule)
		if i > 0 && f.Start < got[i-1].End {
			t.Fatalf("findings overlap: %+v", got)
		}
	}
	if want := "github-pat aws-access-token private-key slack-bot-token"; strings.Join(rules, " ") != want {
		t.Fatalf("rules in order = %q, want %q", strings.Join(rules, " "), want)
	}
}

func TestMerge(t *testing.T) {
	for _, c := range []struct {
		in, want []Finding
	}{
		{nil, []Finding{}},
		{
			[]Finding{{Rule: "b", Start: 10, End: 20}, {Rule: "a", Start: 0, End: 5}},
			[]Finding{{Rule: "a", Start: 0, End: 5}, {Rule: "b", Start: 10, End: 20}},
		},
		{
			[]Finding{{Rule: "jwt", Start: 5, End: 30}, {Rule: "generic-api-key", Start: 0, End: 10}},
			[]Finding{{Rule: "generic-api-key", Start: 0, End: 30}},
		},
		{
			[]Finding{{Rule: "short", Start: 0, End: 5}, {Rule: "long", Start: 0, End: 9}, {Rule: "inner", Start: 2, End: 3}},
			[]Finding{{Rule: "long", Start: 0, End: 9}},
		},
		{
			[]Finding{{Rule: "a", Start: 0, End: 5}, {Rule: "b", Start: 5, End: 9}},
			[]Finding{{Rule: "a", Start: 0, End: 5}, {Rule: "b", Start: 5, End: 9}},
		},
	} {
		if got := merge(c.in); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Fatalf("merge = %+v, want %+v", got, c.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	// printf %s AKIALALEMEL33243OLIB | sha256sum | xxd -r -p | base32
	// starts with P4OW.
	if got, want := fingerprint(awsKey), "P4OW"; got != want {
		t.Fatalf("fingerprint(aws sample) = %q, want %q", got, want)
	}
	for _, c := range samples {
		fp := fingerprint(c.secret)
		if !isFingerprint(fp) {
			t.Fatalf("fingerprint(%s) = %q, want 4 base32 characters", c.name, fp)
		}
		if fp != fingerprint(c.secret) {
			t.Fatalf("fingerprint(%s) is not stable", c.name)
		}
	}
}

func TestMarker(t *testing.T) {
	got := Marker(Finding{Rule: "aws-access-token", Fingerprint: "7YRQ"})
	if want := "[secret redacted: aws-access-token …7YRQ]"; got != want {
		t.Fatalf("Marker = %q, want %q", got, want)
	}
}

// TestMarkerIsNeverAFinding checks every rule's marker, in the places a
// redacted secret ends up, against the whole rule set.
func TestMarkerIsNeverAFinding(t *testing.T) {
	s := scanner(t)
	for id := range s.d.Config.Rules {
		for _, fp := range []string{"7YRQ", "Z2KA", "AAAQ"} {
			m := Marker(Finding{Rule: id, Fingerprint: fp})
			for _, text := range []string{
				m,
				"token " + m + " end",
				"password: " + m,
				"secret = \"" + m + "\"\n",
				"api_key: \"" + m + "\"",
				`{"access_token": "` + m + `"}`,
				"---\n" + id + ": \"" + m + "\"\n---\n",
			} {
				if got := s.Scan(text); got != nil {
					t.Fatalf("Scan(%q) = %+v, want nothing", text, got)
				}
			}
		}
	}
}

func TestFakeMarkerHidesNothing(t *testing.T) {
	s := scanner(t)
	for _, text := range []string{
		"[secret redacted: " + githubPAT + " …ABCD]",
		"[secret redacted: github-pat …" + githubPAT + "]",
		"[secret redacted: no-such-rule " + githubPAT + " …ABCD]",
	} {
		got := s.Scan(text)
		if len(got) != 1 || text[got[0].Start:got[0].End] != githubPAT {
			t.Fatalf("Scan(%q) = %+v, want the token", text, got)
		}
	}
}

func TestRedactIsIdempotent(t *testing.T) {
	s := scanner(t)
	var all []string
	for _, c := range samples {
		all = append(all, c.text)
	}
	texts := append(all, strings.Join(all, "\n\n"), "---\ntoken: "+githubPAT+"\n---\n# Notes\n"+strings.Join(all, "\n"))
	for _, text := range texts {
		once, fs := s.Redact(text)
		if len(fs) == 0 {
			t.Fatalf("Redact(%q) found nothing", text)
		}
		twice, fs2 := s.Redact(once)
		if twice != once || fs2 != nil {
			t.Fatalf("Redact(Redact(%q))\n got %q, %+v\nwant %q, nothing", text, twice, fs2, once)
		}
		again, _ := s.Redact(text)
		if again != once {
			t.Fatalf("Redact(%q) gave different bytes on a second run:\n%q\n%q", text, once, again)
		}
		for _, c := range samples {
			if strings.Contains(once, c.secret) {
				t.Fatalf("Redact(%q) kept the %s secret: %q", text, c.name, once)
			}
		}
	}
}

func TestScanConcurrent(t *testing.T) {
	s := scanner(t)
	want := make([]string, len(samples))
	for i, c := range samples {
		want[i] = fmt.Sprint(s.Scan(c.text))
	}
	const goroutines = 8
	var wg sync.WaitGroup
	errs := make(chan string, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; n < 20; n++ {
				i := (g + n) % len(samples)
				if got := fmt.Sprint(s.Scan(samples[i].text)); got != want[i] {
					errs <- fmt.Sprintf("goroutine %d: Scan(%s) = %s, want %s", g, samples[i].name, got, want[i])
					return
				}
				if red, _ := s.Redact(samples[i].text); strings.Contains(red, samples[i].secret) {
					errs <- fmt.Sprintf("goroutine %d: Redact(%s) kept the secret", g, samples[i].name)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestNewConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds several rule sets")
	}
	const n = 3
	var wg sync.WaitGroup
	got := make([]int, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s, err := New()
			if err != nil {
				errs[i] = err
				return
			}
			got[i] = len(s.Scan(samples[0].text))
		}(i)
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		if errs[i] != nil || got[i] != 1 {
			t.Fatalf("New #%d: %v, %d findings, want 1", i, errs[i], got[i])
		}
	}
}

func TestAllowCommentExemptsNothing(t *testing.T) {
	s := scanner(t)
	text := "token = " + githubPAT + " // gitleaks:allow"
	if got := s.Scan(text); len(got) != 1 || got[0].Rule != "github-pat" {
		t.Fatalf("Scan(%q) = %+v, want the token", text, got)
	}
}

func TestGitleaksLogsNothing(t *testing.T) {
	scanner(t)
	if got := logging.Logger.GetLevel(); got != zerolog.Disabled {
		t.Fatalf("gitleaks' logger level = %v, want disabled", got)
	}
}

// TestDropInMarkers covers the guard that keeps a future rule which
// matches marker text from making Redact non-idempotent.
func TestDropInMarkers(t *testing.T) {
	s := scanner(t)
	real := "x [secret redacted: github-pat …ABCQ] y"
	fake := "x [secret redacted: not-a-rule …ABCQ] y"
	bad := "x [secret redacted: github-pat …abcq] y"
	for _, c := range []struct {
		text string
		kept int
	}{
		{real, 0},
		{fake, 1},
		{bad, 1},
	} {
		in := []Finding{{Rule: "generic-api-key", Start: 20, End: 30}}
		if got := dropInMarkers(c.text, in, s.d.Config.Rules); len(got) != c.kept {
			t.Fatalf("dropInMarkers(%q) kept %d, want %d", c.text, len(got), c.kept)
		}
	}
}
