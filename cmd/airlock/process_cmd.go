package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Background processes from the CLI: `sandbox exec --background` starts
// one, `ps` lists them, `logs` prints (or follows) their output, `wait`
// waits and exits with the process's exit code, `kill-process` signals
// one.

// startBackground starts req as a background process of sb and prints its
// id (the process as JSON with --json).
func startBackground(cmd *cobra.Command, f *clientFlags, sb *client.Sandbox, req client.ExecRequest, stdinOpen bool) error {
	p, err := sb.StartProcess(cmd.Context(), client.ProcessRequest{Cmd: req.Cmd, Argv: req.Argv, Env: req.Env,
		Cwd: req.Cwd, Timeout: req.Timeout, Stdin: req.Stdin, StdinOpen: stdinOpen, User: req.User, Pty: req.Pty})
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(cmd.OutOrStdout(), p.ProcessInfo)
	}
	fmt.Fprintln(cmd.OutOrStdout(), p.ID)
	return nil
}

func sbxPsCmd(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "ps ID",
		Short: "List a sandbox's background processes, running and ended",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			ps, err := c.Sandbox(args[0]).Processes(cmd.Context())
			if err != nil {
				return err
			}
			if f.json {
				infos := make([]client.ProcessInfo, len(ps))
				for i, p := range ps {
					infos[i] = p.ProcessInfo
				}
				return printJSON(cmd.OutOrStdout(), map[string]any{"processes": infos})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PID\tSTATE\tEXIT\tSTARTED\tSTDOUT\tSTDERR\tCOMMAND")
			for _, p := range ps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", p.ID, p.State, exitWord(p.ProcessInfo),
					p.StartedAt.Local().Format(time.TimeOnly), p.StdoutBytes, p.StderrBytes, commandWord(p.ProcessInfo))
			}
			return tw.Flush()
		},
	}
}

// exitWord is a process's exit code and signal for ps ("-" while running).
func exitWord(p client.ProcessInfo) string {
	switch {
	case p.ExitCode == nil:
		return "-"
	case p.Signal != "":
		return strconv.Itoa(*p.ExitCode) + " (" + p.Signal + ")"
	}
	return strconv.Itoa(*p.ExitCode)
}

// commandWord is a process's command for ps, cut to a terminal's width.
func commandWord(p client.ProcessInfo) string {
	s := p.Cmd
	if s == "" {
		s = fmt.Sprint(p.Argv)
	}
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

func sbxLogsCmd(f *clientFlags) *cobra.Command {
	var stderr, follow bool
	cmd := &cobra.Command{
		Use:   "logs ID PID [--stderr] [--follow]",
		Short: "Print a background process's output (the latest 1 MiB the daemon keeps); --follow until it ends",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			p := c.Sandbox(args[0]).Process(args[1])
			stream := client.Stdout
			if stderr {
				stream = client.Stderr
			}
			var dropped int64
			if follow {
				_, dropped, err = p.Follow(cmd.Context(), stream, 0, cmd.OutOrStdout())
			} else {
				var out *client.ProcessOutput
				if out, err = p.Output(cmd.Context(), stream, 0); err == nil {
					dropped = out.Dropped
					_, err = cmd.OutOrStdout().Write(out.Data)
				}
			}
			if dropped > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "airlock: %d earlier bytes of %s are no longer kept\n", dropped, stream)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&stderr, "stderr", false, "print stderr instead of stdout")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing output as it comes until the process ends")
	return cmd
}

func sbxWaitCmd(f *clientFlags) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait ID PID [--timeout 1m]",
		Short: "Wait for a background process to end; exits with its exit code",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			p := c.Sandbox(args[0]).Process(args[1])
			if err := p.Wait(cmd.Context(), timeout); err != nil {
				return err
			}
			if f.json {
				if err := printJSON(cmd.OutOrStdout(), p.ProcessInfo); err != nil {
					return err
				}
			}
			if p.ExitCode == nil {
				return errdefs.FailedPrecondition("process %s %s without an exit status: %s", p.ID, p.State, p.Error)
			}
			if *p.ExitCode != 0 {
				return exitError{*p.ExitCode}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (exit with deadline_exceeded); 0 = wait until it ends")
	return cmd
}

func sbxKillProcessCmd(f *clientFlags) *cobra.Command {
	var signal string
	cmd := &cobra.Command{
		Use:     "kill-process ID PID [--signal TERM]",
		Aliases: []string{"pkill"},
		Short:   "Signal a background process's whole tree (default KILL); returns at once",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			p := c.Sandbox(args[0]).Process(args[1])
			if err := p.Kill(cmd.Context(), signal); err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), p.ProcessInfo)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&signal, "signal", "s", "KILL", "TERM, KILL, INT, HUP, QUIT, USR1 or USR2")
	return cmd
}

// sendStdinChunk is what one stdin write carries: the API takes 1 MiB of
// JSON a request, and bytes that are not UTF-8 go base64 (a third more).
const sendStdinChunk = 512 << 10

func sbxSendStdinCmd(f *clientFlags) *cobra.Command {
	var closeAfter bool
	cmd := &cobra.Command{
		Use:   "send-stdin ID PID [--close] < INPUT",
		Short: "Send this process's stdin to a background process started with --stdin-open or -t",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			p := c.Sandbox(args[0]).Process(args[1])
			buf := make([]byte, sendStdinChunk)
			for {
				n, rerr := io.ReadFull(cmd.InOrStdin(), buf)
				if n > 0 {
					if err := p.WriteStdin(cmd.Context(), buf[:n]); err != nil {
						return err
					}
				}
				if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
					break
				}
				if rerr != nil {
					return fmt.Errorf("read stdin: %w", rerr)
				}
			}
			if closeAfter {
				return p.CloseStdin(cmd.Context())
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&closeAfter, "close", false, "close the process's stdin after the input (on a pty: send EOF)")
	return cmd
}
