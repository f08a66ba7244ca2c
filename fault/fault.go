// Package fault is memhost's one error type. An error carries a Kind that
// callers branch on (the CLI picks an exit code, HTTP a status code, MCP
// whether the model may retry), the request field it is about, and a
// message in plain words that names no interface's vocabulary (no CLI
// flag, no HTTP route): each interface words the error its own way from
// these parts. No code branches on an error's text.
package fault

import (
	"context"
	"errors"
	"fmt"
	"regexp"
)

// Kind is what went wrong, as callers branch on it.
type Kind string

// The kinds.
const (
	// Internal is anything not caused by the request: a disk or database
	// failure. The zero Kind reads as Internal.
	Internal Kind = "internal"
	// BadInput means the request is invalid; retrying it unchanged fails
	// again.
	BadInput Kind = "bad-input"
	// NotFound means the request names something that does not exist.
	NotFound Kind = "not-found"
	// Outside means a path leads out of the folder it must stay in.
	Outside Kind = "outside"
	// Conflict means the request collides with the current state (a page
	// changed since it was read, a lock held by another process).
	Conflict Kind = "conflict"
	// Unavailable means a part needed for the request cannot serve it
	// now (a plugin starting, crashed or not installed); it may work later.
	Unavailable Kind = "unavailable"
	// Canceled means the caller went away: its context was canceled.
	Canceled Kind = "canceled"
	// Timeout means the operation ran out of its time (a deadline set by
	// memhost or by the caller passed); it may work with more time.
	Timeout Kind = "timeout"
)

// Error is a memhost error: its kind, the request field it is about ("" when
// none) and a message for a person. Err, when set, is the cause, reachable
// through errors.Is and errors.As.
type Error struct {
	Kind    Kind
	Field   string
	Message string
	Err     error
}

func (e *Error) Error() string {
	switch {
	case e.Message != "":
		return e.Message
	case e.Err != nil:
		return e.Err.Error()
	}
	return string(e.kind())
}

func (e *Error) Unwrap() error { return e.Err }

// FaultKind reports the error's kind (see KindOf).
func (e *Error) FaultKind() Kind { return e.kind() }

func (e *Error) kind() Kind {
	if e.Kind == "" {
		return Internal
	}
	return e.Kind
}

// Errorf returns an *Error of kind about field with a formatted message. A
// %w verb in format sets the cause. A string or []byte argument longer
// than maxArg bytes (a refused value of megabytes) is shown by its first
// keptArg characters and "…", so that a message stays a line.
func Errorf(kind Kind, field, format string, args ...any) error {
	args = append([]any(nil), args...) // the caller's slice stays as it was
	for i, a := range args {
		switch v := a.(type) {
		case string:
			if len(v) > maxArg {
				args[i] = shorten(v)
			}
		case []byte:
			if len(v) > maxArg {
				args[i] = shorten(string(v[:maxArg]))
			}
		}
	}
	err := fmt.Errorf(format, args...)
	msg := err.Error()
	if len(msg) > maxArg { // a long value inside a cause's text (a path in an OS error)
		msg = longWord.ReplaceAllStringFunc(msg, shorten)
	}
	return &Error{Kind: kind, Field: field, Message: msg, Err: errors.Unwrap(err)}
}

// maxArg is the longest string argument Errorf shows whole; keptArg is how
// many characters of a longer one it keeps.
const (
	maxArg  = 512
	keptArg = 60
)

// longWord is a run of more than maxArg bytes without white space.
var longWord = regexp.MustCompile(`\S{513,}`)

func shorten(s string) string {
	if r := []rune(s); len(r) > keptArg {
		return string(r[:keptArg]) + "…"
	}
	return s
}

// BadInputf is Errorf(BadInput, ...).
func BadInputf(field, format string, args ...any) error {
	return Errorf(BadInput, field, format, args...)
}

// Kinded is implemented by errors of other packages that know their kind
// (a notebook path error says whether the page was missing or outside).
type Kinded interface {
	FaultKind() Kind
}

// KindOf returns the kind of err: the first Kinded error in its chain,
// Canceled for a canceled context, Timeout for a passed deadline, Internal
// otherwise, "" for nil.
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	var k Kinded
	if errors.As(err, &k) {
		return k.FaultKind()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	}
	return Internal
}

// FieldOf returns the field of the first *Error in err's chain, "" if none.
func FieldOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}
