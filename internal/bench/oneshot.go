package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Contender is one way to run a throwaway command, measured as a whole
// process: what a user (or a batch script without a daemon) waits for.
type Contender struct {
	Name string
	Argv []string
}

// OneShotResult is one contender's runs.
type OneShotResult struct {
	Name      string
	Wall      Stats
	CPU       Stats // user + system time of the process and its children
	MaxRSSKiB int64 // the largest peak RSS of any run (of the process or a child)
}

// OneShot runs each contender n times, interleaved (a, b, a, b, ...) so
// that load from anything else on the machine falls on all of them alike,
// and returns their figures in the order given. A run that fails is an
// error naming it, with the end of its output.
func OneShot(ctx context.Context, cs []Contender, n int, progress func(string, ...any)) ([]OneShotResult, error) {
	walls := make([][]time.Duration, len(cs))
	cpus := make([][]time.Duration, len(cs))
	out := make([]OneShotResult, len(cs))
	for i := range n {
		for j, c := range cs {
			wall, cpu, rss, err := runOnce(ctx, c)
			if err != nil {
				return nil, fmt.Errorf("bench oneshot: %s, run %d of %d: %w", c.Name, i+1, n, err)
			}
			walls[j] = append(walls[j], wall)
			cpus[j] = append(cpus[j], cpu)
			out[j].MaxRSSKiB = max(out[j].MaxRSSKiB, rss)
		}
		if progress != nil && (i+1)%10 == 0 {
			progress("oneshot: %d of %d rounds", i+1, n)
		}
	}
	for j, c := range cs {
		out[j].Name, out[j].Wall, out[j].CPU = c.Name, summarize(walls[j]), summarize(cpus[j])
	}
	return out, nil
}

// oneShotLimit bounds one run: a hung contender ends the benchmark.
const oneShotLimit = 2 * time.Minute

func runOnce(ctx context.Context, c Contender) (wall, cpu time.Duration, maxRSSKiB int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, oneShotLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	var tail bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &tail
	began := time.Now()
	err = cmd.Run()
	wall = time.Since(began)
	if err != nil {
		msg := strings.TrimSpace(tail.String())
		if len(msg) > 500 {
			msg = msg[len(msg)-500:]
		}
		return 0, 0, 0, fmt.Errorf("%s: %w: %s", strings.Join(c.Argv, " "), err, msg)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxRSSKiB = ru.Maxrss // of the process; children's peaks are in RUSAGE_CHILDREN
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), maxRSSKiB, nil
}

// PrintOneShot writes the results, then at the median the wall-time
// ratio of each of the first ours contenders (airlock's ways) to every
// contender after it.
func PrintOneShot(w io.Writer, rs []OneShotResult, ours int) {
	for _, r := range rs {
		fmt.Fprintf(w, "  %-14s wall %s\n", r.Name, r.Wall)
		fmt.Fprintf(w, "  %-14s cpu  %s, peak RSS %.1f MiB\n", "", r.CPU, float64(r.MaxRSSKiB)/1024)
	}
	var names []string
	for i := 0; i < ours && i < len(rs); i++ {
		for _, r := range rs[i+1:] {
			if rs[i].Wall.P50 > 0 && r.Wall.P50 > 0 {
				names = append(names, fmt.Sprintf("%s/%s %.2fx", rs[i].Name, r.Name, float64(rs[i].Wall.P50)/float64(r.Wall.P50)))
			}
		}
	}
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	fmt.Fprintf(w, "  ratio          wall p50 %s (same run, interleaved)\n", strings.Join(names, ", "))
}
