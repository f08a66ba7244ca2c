// Package gitrepo drives a git repository with a work tree: git commands
// (which die with memhost), the index file read and written directly,
// commits and fast-forwards without a git process when they can (else
// gitindex.ErrSlowPath, and the caller runs git), and the work tree read beneath
// the home with no symlink followed and no FIFO waited on. What is shared
// and how syncs merge is federation's, above it.
package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// ErrNoGit means the git binary is not installed (or not on PATH).
var ErrNoGit = errors.New("git is not installed (Debian: apt-get install git)")

// Repo is a git repository with a work tree, driven through the git
// binary. Its methods are safe for concurrent use only in that git's own
// locks keep the repository consistent; callers serialise work that must
// not interleave with Lock.
type Repo struct {
	Dir string // the work tree (the memhost home)
	// Author is "Name <email>" for commits; "" uses "memhost <memhost@HOSTNAME>".
	Author string
	// Shared are the work-tree paths a question about many files at once
	// names whole (Excluded with more than 64 paths): what the caller
	// shares.
	Shared []string
}

// gitError is a git command that failed, with what it printed.
type gitError struct {
	args   []string
	code   int
	stderr string
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		// The last line of git's complaint is usually the reason.
		lines := strings.Split(msg, "\n")
		msg = strings.TrimSpace(lines[len(lines)-1])
		if strings.HasPrefix(lines[0], "fatal:") || strings.HasPrefix(lines[0], "error:") {
			msg = strings.TrimSpace(lines[0])
		}
	}
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.code)
	}
	return fmt.Sprintf("git %s: %s", e.args[0], msg)
}

// ExitCode is the exit status of a failed git command, -1 if it did not run.
func ExitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// author is the name and email of this Repo's commits and reflog
// entries, as git would write them (identPart): the fast paths write
// them into objects themselves, and git fsck refuses an ident line with
// a <, > or newline out of place. An Author with no name left ("<email>",
// or crud only) takes memhost's name, where git would refuse to commit.
func (r *Repo) author() (name, email string) {
	a := strings.TrimSpace(r.Author)
	if a == "" {
		host, _ := os.Hostname()
		if host == "" {
			host = "localhost"
		}
		return "memhost", identPart("memhost@" + host)
	}
	name = a
	// The email is what the last < and the final > enclose: a name may
	// hold a stray <, an email never does.
	if i := strings.LastIndexByte(a, '<'); i >= 0 && strings.HasSuffix(a, ">") {
		name, email = a[:i], a[i+1:len(a)-1]
	}
	if name, email = identPart(name), identPart(email); name == "" {
		name = "memhost"
	}
	return name, email
}

// identPart is a name or an email as git's ident.c writes it into a commit
// (strbuf_addstr_without_crud): crud trimmed from both ends (bytes up to
// the space, and , : ; < > " \ '), then the ident line's delimiters, < >
// and newline, dropped inside. A NUL, which git never sees (its strings
// end there), is dropped too. Dots are kept, as git does since 2.42.
func identPart(s string) string {
	crud := func(c byte) bool { return c <= ' ' || strings.IndexByte(`,:;<>"\'`, c) >= 0 }
	i, j := 0, len(s)
	for i < j && crud(s[i]) {
		i++
	}
	for j > i && crud(s[j-1]) {
		j--
	}
	// Byte by byte, as git does: bytes of UTF-8 (or not) are kept as they are.
	b := make([]byte, 0, j-i)
	for k := i; k < j; k++ {
		if c := s[k]; c != '\n' && c != '<' && c != '>' && c != 0 {
			b = append(b, c)
		}
	}
	return string(b)
}

// Env is git's environment: no prompts, no pager, a fixed language (its
// messages are shown, never parsed beyond exit codes), this Repo's author.
func (r *Repo) Env(extra []string) []string {
	name, email := r.author()
	env := append(os.Environ(),
		"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "LC_ALL=C", "GIT_EDITOR=true",
		"GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email,
		"GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email,
		"GIT_CONFIG_NOSYSTEM=1",
	)
	return append(env, extra...)
}

// Git runs git with args in the work tree and returns its standard output.
func (r *Repo) Git(ctx context.Context, args ...string) (string, error) {
	out, err := r.GitIO(ctx, nil, nil, args...)
	return string(out), err
}

// GitIO runs git with stdin and extra environment variables.
func (r *Repo) GitIO(ctx context.Context, stdin io.Reader, env []string, args ...string) ([]byte, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoGit
	}
	// No executable bit and no symlink is ever written or recorded
	// (federation's shared.go): git ignores the bit on disk and writes symlinks, were
	// one to get past the checks, as plain files.
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.quotepath=off", "-c", "gc.auto=0", "-c", "maintenance.auto=false",
		"-c", "core.fileMode=false", "-c", "core.symlinks=false"}, args...)...)
	cmd.Dir = r.Dir
	cmd.Env = r.Env(env)
	cmd.Stdin = stdin
	dieWithParent(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			return stdout.Bytes(), ctx.Err()
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.Bytes(), &gitError{args: args, code: ee.ExitCode(), stderr: stderr.String()}
		}
		return stdout.Bytes(), fmt.Errorf("git %s: %w", args[0], err)
	}
	return stdout.Bytes(), nil
}

// Rev resolves a revision to a commit id; "" and no error when it does
// not exist.
func (r *Repo) Rev(ctx context.Context, name string) (string, error) {
	out, err := r.Git(ctx, "rev-parse", "-q", "--verify", name+"^{commit}")
	if ExitCode(err) == 1 {
		return "", nil
	}
	return strings.TrimSpace(out), err
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.Git(ctx, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	if ExitCode(err) == 1 {
		return false, nil
	}
	return false, err
}

// show reads a blob by object id.
func (r *Repo) Blob(ctx context.Context, oid string) ([]byte, error) {
	return r.GitIO(ctx, nil, nil, "cat-file", "blob", oid)
}

// HashObject stores data as a blob and returns its id.
func (r *Repo) HashObject(ctx context.Context, data []byte) (string, error) {
	out, err := r.GitIO(ctx, bytes.NewReader(data), nil, "hash-object", "-w", "--stdin")
	return strings.TrimSpace(string(out)), err
}
