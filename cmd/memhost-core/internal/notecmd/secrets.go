package notecmd

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
)

// secretsCommands find and redact the secrets already in a home.
func secretsCommands(a cmds) []*cli.Command {
	return []*cli.Command{{
		Name:  "secrets",
		Usage: "find the secrets already in the home's pages, transcripts and git history, and redact them",
		Description: "Every write redacts secrets before storing them (memory.privacy.secrets: redact); these find\n" +
			"and replace the ones a home already holds.\n\n" +
			"Examples:\n" +
			"  memhost secrets scan\n" +
			"  memhost secrets redact",
		Commands: []*cli.Command{
			{
				Name:  "scan",
				Usage: "list the secrets in the notebook and the transcripts (rule, file, line, fingerprint; never the secret)",
				Description: "Uses gitleaks' rules, as every write does. With --history, every version of the shared files\n" +
					"in the home's git history too.\n\n" +
					"Examples:\n" +
					"  memhost secrets scan --history",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "history", Usage: "also scan every version in the home's git history"}},
				Action: a.secretsScan,
			},
			{
				Name:  "redact",
				Usage: "rewrite the pages and transcripts that hold a secret with each secret replaced by its marker",
				Description: "Atomically, every other byte kept (transcripts too); run again it writes nothing. The git\n" +
					"history is not rewritten: secrets scan --history lists what it still holds.\n\n" +
					"Examples:\n" +
					"  memhost secrets redact",
				Action: a.secretsRedact,
			},
		},
	}}
}

func (a cmds) secretsScan(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(o cmdapp.Ops) error {
		resp, err := o.SecretsScan(ctx, mh.SecretsScanRequest{History: cmd.Bool("history")})
		if err != nil {
			return err
		}
		return a.Out(cmd, resp, func(w io.Writer) {
			for _, f := range resp.Findings {
				where := fmt.Sprintf("%s:%d", f.Path, f.Line)
				if f.History {
					where += " (git history, object " + f.Object[:min(12, len(f.Object))] + ")"
				}
				fmt.Fprintf(w, "%s: %s …%s\n", where, f.Rule, f.Fingerprint)
			}
			fmt.Fprintf(w, "%s in %s scanned\n", cmdapp.Plural(len(resp.Findings), "secret"), cmdapp.Plural(resp.Files, "file"))
			if len(resp.Findings) > 0 {
				fmt.Fprintln(w, "memhost secrets redact rewrites the notebook's and transcripts' ones")
			}
		})
	})
}

func (a cmds) secretsRedact(ctx context.Context, cmd *cli.Command) error {
	if err := cmdapp.NoArgs(cmd); err != nil {
		return err
	}
	return a.With(ctx, cmd, func(o cmdapp.Ops) error {
		resp, err := o.SecretsRedact(ctx, mh.SecretsRedactRequest{RequestID: a.RequestID(cmd)})
		if err != nil {
			return err
		}
		a.Warn(resp.Warnings...)
		return a.Out(cmd, resp, func(w io.Writer) {
			for _, f := range resp.Redacted {
				fmt.Fprintf(w, "redacted %s:%d: %s …%s\n", f.Path, f.Line, f.Rule, f.Fingerprint)
			}
			fmt.Fprintf(w, "%s rewritten\n", cmdapp.Plural(len(resp.Files), "file"))
		})
	})
}
