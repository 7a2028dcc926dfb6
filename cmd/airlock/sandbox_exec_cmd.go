package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// sbxExecOptions are the flags of `airlock sandbox exec`.
type sbxExecOptions struct {
	timeout time.Duration
	shell   bool
	env     []string
	cwd     string
	stdin   bool
	// background starts the command as a background process and prints
	// its id (see process_cmd.go).
	background bool
	user       string // run as this guest user
	tty        bool   // on a pty (the terminal's size, or 24x80)
	stdinOpen  bool   // -d: keep the process's stdin open for send-stdin
}

func sbxExecCmd(f *clientFlags) *cobra.Command {
	o := &sbxExecOptions{}
	cmd := &cobra.Command{
		Use:   "exec ID [flags] -- CMD [ARGS...]",
		Short: "Run a command in a sandbox, streaming its output; exits with its exit code",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			req, err := o.request(args[1:])
			if err != nil {
				return err
			}
			if o.background {
				return startBackground(cmd, f, c.Sandbox(args[0]), req, o.stdinOpen)
			}
			var res *client.ExecResult
			if f.json {
				res, err = execPrintJSON(cmd, c.Sandbox(args[0]), req)
			} else {
				res, err = o.execStream(cmd, c.Sandbox(args[0]), req)
			}
			if err != nil {
				return err
			}
			if res.ExitCode != 0 {
				return exitError{res.ExitCode}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&o.timeout, "timeout", 0, "kill the command (and all it started) after this long; 0 = the sandbox's TTL")
	fl.BoolVar(&o.shell, "shell", false, "run the single argument with /bin/sh -c")
	fl.StringArrayVarP(&o.env, "env", "e", nil, "KEY=VALUE to add to the environment (repeatable)")
	fl.StringVar(&o.cwd, "cwd", "", "working directory in the guest (absolute)")
	fl.BoolVarP(&o.stdin, "interactive", "i", false, "send this process's stdin (up to 768 KiB) to the command")
	fl.BoolVarP(&o.background, "background", "d", false, "start the command as a background process and print its id (see sandbox ps, logs, wait, kill-process)")
	fl.StringVarP(&o.user, "user", "u", "", "run as this guest user (it cannot become root again); default root")
	fl.BoolVarP(&o.tty, "tty", "t", false, "run on a pseudo-terminal (this terminal's size, else 24x80): output merged on stdout")
	fl.BoolVar(&o.stdinOpen, "stdin-open", false, "with -d: keep the process's stdin open for sandbox send-stdin")
	return cmd
}

// request builds the exec request for command (the arguments after the
// sandbox id) from the flags, reading stdin with -i.
func (o *sbxExecOptions) request(command []string) (client.ExecRequest, error) {
	req := client.ExecRequest{Cwd: o.cwd, Timeout: o.timeout, User: o.user}
	if o.tty {
		rows, cols := uint32(24), uint32(80)
		if w, h, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 && h > 0 {
			rows, cols = uint32(min(h, 1000)), uint32(min(w, 1000))
		}
		req.Pty = &client.WindowSize{Rows: rows, Cols: cols}
	}
	if o.shell {
		if len(command) != 1 {
			return req, errdefs.InvalidArgument("--shell takes exactly one command string")
		}
		req.Cmd = command[0]
	} else {
		req.Argv = command
	}
	if len(o.env) > 0 {
		req.Env = map[string]string{}
		for _, e := range o.env {
			k, v, ok := strings.Cut(e, "=")
			if !ok || k == "" {
				return req, errdefs.InvalidArgument("--env %q: want KEY=VALUE", e)
			}
			req.Env[k] = v
		}
	}
	if o.stdin {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, maxCLIStdin+1))
		if err != nil {
			return req, fmt.Errorf("read stdin: %w", err)
		}
		if len(b) > maxCLIStdin {
			return req, errdefs.ResourceExhausted("stdin is over %d KiB; copy it in with `airlock sandbox cp` instead", maxCLIStdin>>10)
		}
		req.Stdin = b
	}
	return req, nil
}

// execPrintJSON prints one JSON document on stdout holding the command's
// output and exit; nothing streamed, nothing on stderr.
func execPrintJSON(cmd *cobra.Command, sb *client.Sandbox, req client.ExecRequest) (*client.ExecResult, error) {
	res, err := sb.ExecRequest(cmd.Context(), req)
	if err != nil {
		return nil, err
	}
	if err := printJSON(cmd.OutOrStdout(), execJSON(res)); err != nil {
		return nil, err
	}
	return res, nil
}

// execStream streams the command's output and says on stderr when it
// timed out or was truncated.
func (o *sbxExecOptions) execStream(cmd *cobra.Command, sb *client.Sandbox, req client.ExecRequest) (*client.ExecResult, error) {
	res, err := sb.ExecStream(cmd.Context(), req, cmd.OutOrStdout(), cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	if res.TimedOut {
		fmt.Fprintf(cmd.ErrOrStderr(), "airlock: command timed out after %s and was killed\n", o.timeout)
	}
	if res.StdoutTruncated || res.StderrTruncated {
		fmt.Fprintf(cmd.ErrOrStderr(), "airlock: output truncated (stdout %d bytes, stderr %d bytes produced)\n", res.StdoutBytes, res.StderrBytes)
	}
	return res, nil
}

// execJSON is `sandbox exec --json`'s document: the result with the
// output as the API gives it (text, or base64 when it is not UTF-8).
func execJSON(res *client.ExecResult) any {
	out := struct {
		*client.ExecResult
		Stdout       *string `json:"stdout,omitempty"`
		Stderr       *string `json:"stderr,omitempty"`
		StdoutBase64 string  `json:"stdout_base64,omitempty"`
		StderrBase64 string  `json:"stderr_base64,omitempty"`
	}{ExecResult: res}
	if utf8.ValidString(res.Stdout) {
		out.Stdout = &res.Stdout
	} else {
		out.StdoutBase64 = base64.StdEncoding.EncodeToString([]byte(res.Stdout))
	}
	if utf8.ValidString(res.Stderr) {
		out.Stderr = &res.Stderr
	} else {
		out.StderrBase64 = base64.StdEncoding.EncodeToString([]byte(res.Stderr))
	}
	return out
}
