// Command memhost-generator-openai is memhost's generator for any
// OpenAI-compatible chat endpoint (POST /v1/chat/completions): OpenAI,
// DeepSeek, vLLM, llama.cpp's server, LM Studio. The API key is read from
// the environment variable the apiKeyEnv option names (default
// OPENAI_API_KEY); it is never written to a file or a log.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/plugins/internal/chathttp"
	"github.com/memhost/memhost/sdk"
)

const version = "1.0.0"

// options, as set under memory.generator.options.openai in config.yaml.
type options struct {
	url            string        // base URL; default https://api.openai.com/v1
	model          string        // required
	apiKeyEnv      string        // default OPENAI_API_KEY; its value is the key
	timeout        time.Duration // per request; default 120s
	retries        int           // on 429, 5xx and no connection; default 3
	responseFormat string        // json_schema (default), json_object or none
	maxTokens      int           // default for requests that give none; 0: the server's
	contextTokens  int           // the model's context, reported as Info.MaxInputTokens
}

const keys = "url, model, apiKeyEnv, timeout, retries, responseFormat, maxTokens, contextTokens"

func defaults() options {
	return options{url: "https://api.openai.com/v1", apiKeyEnv: "OPENAI_API_KEY", timeout: 120 * time.Second, retries: 3, responseFormat: "json_schema"}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Provider completes chats through an OpenAI-compatible endpoint. It is
// safe for concurrent use.
type Provider struct {
	getenv func(string) string
	log    hclog.Logger

	mu  sync.Mutex
	opt options
}

var _ sdk.Generator = (*Provider)(nil)

// New returns a provider with the default options.
func New(getenv func(string) string, log hclog.Logger) *Provider {
	return &Provider{getenv: getenv, log: log, opt: defaults()}
}

// Configure sets the options; unknown keys and bad values are refused by
// name. The key itself is never an option: only the variable's name.
func (p *Provider) Configure(_ context.Context, o map[string]string) error {
	opt := defaults()
	for k, v := range o {
		switch k {
		case "url":
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return sdk.BadRequest("option url=%q: want the API's base URL, such as https://api.deepseek.com/v1 or http://127.0.0.1:8080/v1", v)
			}
			opt.url = strings.TrimRight(strings.TrimSuffix(strings.TrimRight(v, "/"), "/chat/completions"), "/")
		case "model":
			if strings.TrimSpace(v) == "" {
				return sdk.BadRequest("option model is empty")
			}
			opt.model = strings.TrimSpace(v)
		case "apiKeyEnv":
			if !envName.MatchString(v) {
				return sdk.BadRequest("option apiKeyEnv=%q: want the name of an environment variable, such as DEEPSEEK_API_KEY (never the key itself)", v)
			}
			opt.apiKeyEnv = v
		case "timeout":
			d, err := chathttp.TimeoutOption(v)
			if err != nil {
				return err
			}
			opt.timeout = d
		case "retries":
			n, err := chathttp.RetriesOption(v)
			if err != nil {
				return err
			}
			opt.retries = n
		case "responseFormat":
			if v != "json_schema" && v != "json_object" && v != "none" {
				return sdk.BadRequest("option responseFormat=%q: want json_schema, json_object (DeepSeek) or none", v)
			}
			opt.responseFormat = v
		case "maxTokens", "contextTokens":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 1<<24 {
				return sdk.BadRequest("option %s=%q: want a number of tokens", k, v)
			}
			if k == "maxTokens" {
				opt.maxTokens = n
			} else {
				opt.contextTokens = n
			}
		default:
			return sdk.BadRequest("unknown option %q (openai takes %s)", k, keys)
		}
	}
	p.mu.Lock()
	p.opt = opt
	p.mu.Unlock()
	return nil
}

func (p *Provider) snapshot() options {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.opt
}

// client is the HTTP client for opt, with the key (when set) in its
// Authorization header.
func (p *Provider) client(opt options) *chathttp.Client {
	c := &chathttp.Client{Service: "the chat endpoint at " + opt.url, Timeout: opt.timeout, Retries: opt.retries, Log: p.log,
		Header: http.Header{}, Message: errorMessage}
	if key := strings.TrimSpace(p.getenv(opt.apiKeyEnv)); key != "" {
		c.Header.Set("Authorization", "Bearer "+key)
	}
	return c
}

// errorMessage reads OpenAI's {"error": {"message": ...}} (and the plain
// {"error": "..."} some servers send).
func errorMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Error) == 0 {
		return ""
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	var s string
	json.Unmarshal(e.Error, &s)
	return s
}

// Info describes the model: its id names the model and the endpoint's host.
func (p *Provider) Info(context.Context) (sdk.Info, error) {
	opt := p.snapshot()
	host := opt.url
	if u, err := url.Parse(opt.url); err == nil {
		host = u.Host
	}
	return sdk.Info{Name: "openai", Version: version, ModelID: "openai/" + opt.model + "@" + host, MaxInputTokens: opt.contextTokens}, nil
}

// Status is ready when a model is set, the key's variable is set (when
// one was named), and the endpoint answers GET /models listing the model
// (an endpoint without that route is taken at its word).
func (p *Provider) Status(ctx context.Context) (sdk.Status, error) {
	if err := p.check(ctx); err != nil {
		return sdk.Status{State: sdk.StateError, Message: sdk.StatusMessage(err)}, nil
	}
	return sdk.Status{State: sdk.StateReady, Progress: 1}, nil
}

func (p *Provider) check(ctx context.Context) error {
	opt := p.snapshot()
	if opt.model == "" {
		return sdk.NotReady("no model chosen: set the option model (e.g. gpt-4o-mini, deepseek-chat)")
	}
	c := p.client(opt)
	c.Retries = 0
	c.Timeout = min(opt.timeout, 10*time.Second)
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	err := c.Do(ctx, http.MethodGet, opt.url+"/models", nil, &list)
	var se *chathttp.StatusError
	switch {
	case errors.As(err, &se) && (se.Code == http.StatusNotFound || se.Code == http.StatusMethodNotAllowed):
		return nil // no model list here: the first chat tells
	case err != nil:
		return p.explain(opt, err)
	}
	ids := make([]string, len(list.Data))
	for i, m := range list.Data {
		ids[i] = m.ID
	}
	if len(ids) > 0 && !slices.Contains(ids, opt.model) {
		if len(ids) > 8 {
			ids = append(ids[:8], "…")
		}
		return sdk.NotReady("model %s is not served at %s (it serves %s)", opt.model, opt.url, strings.Join(ids, ", "))
	}
	return nil
}

// explain words a failed request for a person: what went wrong and what
// to do, never the key.
func (p *Provider) explain(opt options, err error) error {
	var se *chathttp.StatusError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, chathttp.ErrUnreachable):
		return sdk.NotReady("%v", err)
	case errors.As(err, &se) && (se.Code == http.StatusUnauthorized || se.Code == http.StatusForbidden):
		if strings.TrimSpace(p.getenv(opt.apiKeyEnv)) == "" {
			return sdk.NotReady("%s refused the request (%d): no API key; set the environment variable %s", opt.url, se.Code, opt.apiKeyEnv)
		}
		return sdk.NotReady("%s refused the API key in %s (%d): %s", opt.url, opt.apiKeyEnv, se.Code, se.Message)
	case errors.As(err, &se) && se.Code == http.StatusNotFound:
		return sdk.NotReady("%s answered 404 for model %s: %s", opt.url, opt.model, se.Message)
	case errors.As(err, &se) && se.Code == http.StatusTooManyRequests:
		return fmt.Errorf("%s is rate limiting (429) after %d retries: %s", opt.url, opt.retries, se.Message)
	case errors.As(err, &se) && se.Code >= 500:
		return fmt.Errorf("%s failed (%d) after %d retries: %s", opt.url, se.Code, opt.retries, se.Message)
	case errors.As(err, &se) && se.Code == http.StatusBadRequest:
		return sdk.BadRequest("%s refused the request (400): %s", opt.url, se.Message)
	}
	return err
}

// Complete sends the chat to /chat/completions. With a schema, the answer
// is asked for as JSON: response_format json_schema, or json_object with
// the schema in a system message for servers without json_schema
// (DeepSeek), or only that message (none).
func (p *Provider) Complete(ctx context.Context, req sdk.CompleteRequest) (sdk.CompleteResponse, error) {
	if err := ctx.Err(); err != nil {
		return sdk.CompleteResponse{}, err
	}
	opt := p.snapshot()
	if opt.model == "" {
		return sdk.CompleteResponse{}, sdk.NotReady("no model chosen: set the option model (e.g. gpt-4o-mini, deepseek-chat)")
	}
	if len(req.Messages) == 0 {
		return sdk.CompleteResponse{}, sdk.BadRequest("no messages to complete")
	}
	msgs := make([]map[string]string, 0, len(req.Messages)+1)
	for i, m := range req.Messages {
		if m.Role != "system" && m.Role != "user" && m.Role != "assistant" {
			return sdk.CompleteResponse{}, sdk.BadRequest("message %d: role %q is not system, user or assistant", i+1, m.Role)
		}
		msgs = append(msgs, map[string]string{"role": m.Role, "content": m.Content})
	}
	body := map[string]any{"model": opt.model, "stream": false, "temperature": req.Temperature}
	if n := req.MaxTokens; n > 0 {
		body["max_tokens"] = n
	} else if opt.maxTokens > 0 {
		body["max_tokens"] = opt.maxTokens
	}
	if len(req.Schema) > 0 {
		if !json.Valid(req.Schema) {
			return sdk.CompleteResponse{}, sdk.BadRequest("the answer's schema is not valid JSON")
		}
		switch opt.responseFormat {
		case "json_schema":
			body["response_format"] = map[string]any{"type": "json_schema",
				"json_schema": map[string]any{"name": "answer", "schema": req.Schema, "strict": false}}
		case "json_object":
			body["response_format"] = map[string]any{"type": "json_object"}
		}
		if opt.responseFormat != "json_schema" {
			msgs = append([]map[string]string{{"role": "system", "content": "Answer with one JSON value, nothing else, following this JSON schema:\n" + string(req.Schema)}}, msgs...)
		}
	}
	body["messages"] = msgs
	var resp struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
				Refusal *string `json:"refusal"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := p.client(opt).Do(ctx, http.MethodPost, opt.url+"/chat/completions", body, &resp); err != nil {
		return sdk.CompleteResponse{}, p.explain(opt, err)
	}
	if len(resp.Choices) == 0 {
		return sdk.CompleteResponse{}, fmt.Errorf("the chat endpoint at %s answered with no choices", opt.url)
	}
	ch := resp.Choices[0]
	switch {
	case ch.Message.Refusal != nil && *ch.Message.Refusal != "":
		return sdk.CompleteResponse{}, fmt.Errorf("the model refused: %s", *ch.Message.Refusal)
	case ch.Message.Content == nil:
		return sdk.CompleteResponse{}, fmt.Errorf("the chat endpoint at %s answered with no message content", opt.url)
	case ch.FinishReason == "length" && len(req.Schema) > 0:
		return sdk.CompleteResponse{}, fmt.Errorf("the answer was cut off at the token limit before its JSON ended; raise maxTokens")
	}
	model := resp.Model
	if model == "" {
		model = opt.model
	}
	return sdk.CompleteResponse{Text: *ch.Message.Content, Model: model, InputTokens: resp.Usage.PromptTokens, OutputTokens: resp.Usage.CompletionTokens}, nil
}

func main() {
	sdk.Serve(New(os.Getenv, sdk.Logger()))
}
