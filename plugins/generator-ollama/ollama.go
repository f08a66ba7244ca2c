// Command memhost-generator-ollama is memhost's generator through a
// running Ollama server: POST /api/chat, with the answer's JSON schema as
// Ollama's format.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memhost/memhost/plugins/internal/ollamahost"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/plugins/internal/chathttp"
	"github.com/memhost/memhost/sdk"
)

const version = "1.0.0"

// options, as set under memory.generator.options.ollama in config.yaml.
type options struct {
	url       string        // default $OLLAMA_HOST, else http://127.0.0.1:11434
	model     string        // default llama3.2
	timeout   time.Duration // per request; default 120s (a cold model loads first)
	retries   int           // on 429, 5xx and no connection; default 2
	keepAlive string        // Ollama's keep_alive; default Ollama's own (5m)
	numCtx    int           // options.num_ctx; 0: the model's default
}

const keys = "url, model, timeout, retries, keepAlive, numCtx"

func defaults(getenv func(string) string) options {
	return options{url: hostURL(getenv("OLLAMA_HOST")), model: "llama3.2", timeout: 120 * time.Second, retries: 2}
}

// hostURL turns OLLAMA_HOST into a base URL.
var hostURL = ollamahost.URL

// Provider completes chats through Ollama. It is safe for concurrent use.
type Provider struct {
	getenv func(string) string
	log    hclog.Logger

	mu  sync.Mutex
	opt options
}

var _ sdk.Generator = (*Provider)(nil)

// New returns a provider with the default options.
func New(getenv func(string) string, log hclog.Logger) *Provider {
	return &Provider{getenv: getenv, log: log, opt: defaults(getenv)}
}

// Configure sets the options; unknown keys and bad values are refused by
// name.
func (p *Provider) Configure(_ context.Context, o map[string]string) error {
	opt := defaults(p.getenv)
	for k, v := range o {
		switch k {
		case "url":
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return sdk.BadRequest("option url=%q: want http://host:port", v)
			}
			opt.url = strings.TrimRight(v, "/")
		case "model":
			if strings.TrimSpace(v) == "" {
				return sdk.BadRequest("option model is empty")
			}
			opt.model = strings.TrimSpace(v)
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
		case "keepAlive":
			opt.keepAlive = v
		case "numCtx":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 1<<24 {
				return sdk.BadRequest("option numCtx=%q: want a number of tokens", v)
			}
			opt.numCtx = n
		default:
			return sdk.BadRequest("unknown option %q (ollama takes %s)", k, keys)
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

func (p *Provider) client(opt options) *chathttp.Client {
	return &chathttp.Client{Service: "Ollama at " + opt.url, Timeout: opt.timeout, Retries: opt.retries, Log: p.log,
		Message: func(body []byte) string {
			var e struct {
				Error string `json:"error"`
			}
			json.Unmarshal(body, &e)
			return e.Error
		}}
}

// fullName adds Ollama's default tag.
func fullName(model string) string {
	if strings.Contains(model, ":") {
		return model
	}
	return model + ":latest"
}

// Info describes the model.
func (p *Provider) Info(context.Context) (sdk.Info, error) {
	opt := p.snapshot()
	return sdk.Info{Name: "ollama", Version: version, ModelID: "ollama/" + fullName(opt.model), MaxInputTokens: opt.numCtx}, nil
}

// Status is ready when the server answers, has the model, and the model
// chats; otherwise error, with what to do about it.
func (p *Provider) Status(ctx context.Context) (sdk.Status, error) {
	if err := p.check(ctx); err != nil {
		return sdk.Status{State: sdk.StateError, Message: sdk.StatusMessage(err)}, nil
	}
	return sdk.Status{State: sdk.StateReady, Progress: 1}, nil
}

func (p *Provider) check(ctx context.Context) error {
	opt := p.snapshot()
	c := p.client(opt)
	c.Retries, c.Timeout = 0, min(opt.timeout, 5*time.Second)
	var tags struct {
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := c.Do(ctx, http.MethodGet, opt.url+"/api/tags", nil, &tags); err != nil {
		return p.explain(opt, err)
	}
	found := false
	for _, m := range tags.Models {
		if fullName(m.Name) == fullName(opt.model) || fullName(m.Model) == fullName(opt.model) {
			found = true
		}
	}
	if !found {
		return sdk.NotReady("model %s is not pulled: run `ollama pull %s`", opt.model, opt.model)
	}
	var show struct {
		Capabilities []string `json:"capabilities"`
	}
	if err := c.Do(ctx, http.MethodPost, opt.url+"/api/show", map[string]any{"model": opt.model}, &show); err != nil {
		return p.explain(opt, err)
	}
	if show.Capabilities != nil && !slices.Contains(show.Capabilities, "completion") {
		return sdk.NotReady("%s is not a chat model (its capabilities: %s); choose one such as llama3.2 or qwen2.5", opt.model, strings.Join(show.Capabilities, ", "))
	}
	return nil
}

func (p *Provider) explain(opt options, err error) error {
	var se *chathttp.StatusError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, chathttp.ErrNoAnswer):
		return sdk.NotReady("%v", err)
	case errors.Is(err, chathttp.ErrUnreachable):
		return sdk.NotReady("Ollama is not reachable at %s: start it with `ollama serve`", opt.url)
	case errors.As(err, &se) && (se.Code == http.StatusNotFound || strings.Contains(se.Message, "try pulling it first")):
		return sdk.NotReady("model %s is not pulled: run `ollama pull %s`", opt.model, opt.model)
	case errors.As(err, &se) && strings.Contains(se.Message, "does not support"):
		return sdk.NotReady("%s cannot chat: %s", opt.model, se.Message)
	case errors.As(err, &se) && se.Transient():
		return fmt.Errorf("Ollama at %s failed (%d) after %d retries: %s", opt.url, se.Code, opt.retries, se.Message)
	case errors.As(err, &se) && se.Code == http.StatusBadRequest:
		return sdk.BadRequest("Ollama refused the request (400): %s", se.Message)
	}
	return err
}

// Complete sends the chat to /api/chat without streaming; a schema goes
// as Ollama's format, so the model's output is constrained to it.
func (p *Provider) Complete(ctx context.Context, req sdk.CompleteRequest) (sdk.CompleteResponse, error) {
	if err := ctx.Err(); err != nil {
		return sdk.CompleteResponse{}, err
	}
	if len(req.Messages) == 0 {
		return sdk.CompleteResponse{}, sdk.BadRequest("no messages to complete")
	}
	opt := p.snapshot()
	msgs := make([]map[string]string, len(req.Messages))
	for i, m := range req.Messages {
		if m.Role != "system" && m.Role != "user" && m.Role != "assistant" {
			return sdk.CompleteResponse{}, sdk.BadRequest("message %d: role %q is not system, user or assistant", i+1, m.Role)
		}
		msgs[i] = map[string]string{"role": m.Role, "content": m.Content}
	}
	mo := map[string]any{"temperature": req.Temperature}
	if req.MaxTokens > 0 {
		mo["num_predict"] = req.MaxTokens
	}
	if opt.numCtx > 0 {
		mo["num_ctx"] = opt.numCtx
	}
	body := map[string]any{"model": opt.model, "messages": msgs, "stream": false, "options": mo}
	if len(req.Schema) > 0 {
		if !json.Valid(req.Schema) {
			return sdk.CompleteResponse{}, sdk.BadRequest("the answer's schema is not valid JSON")
		}
		body["format"] = req.Schema
	}
	if opt.keepAlive != "" {
		body["keep_alive"] = opt.keepAlive
	}
	var resp struct {
		Model   string `json:"model"`
		Message *struct {
			Content string `json:"content"`
		} `json:"message"`
		Done            bool   `json:"done"`
		DoneReason      string `json:"done_reason"`
		PromptEvalCount int    `json:"prompt_eval_count"`
		EvalCount       int    `json:"eval_count"`
	}
	if err := p.client(opt).Do(ctx, http.MethodPost, opt.url+"/api/chat", body, &resp); err != nil {
		return sdk.CompleteResponse{}, p.explain(opt, err)
	}
	switch {
	case resp.Message == nil:
		return sdk.CompleteResponse{}, fmt.Errorf("Ollama at %s answered with no message", opt.url)
	case resp.DoneReason == "length" && len(req.Schema) > 0:
		return sdk.CompleteResponse{}, fmt.Errorf("the answer was cut off at the token limit before its JSON ended")
	}
	model := resp.Model
	if model == "" {
		model = opt.model
	}
	return sdk.CompleteResponse{Text: resp.Message.Content, Model: model, InputTokens: resp.PromptEvalCount, OutputTokens: resp.EvalCount}, nil
}

func main() {
	sdk.Serve(New(os.Getenv, sdk.Logger()))
}
