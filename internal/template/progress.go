package template

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/airlock-dev/airlock/internal/image"
)

// Event is one structured progress report. Builders pass it as the only
// argument of an image.Progress call (progress("%v", ev)), so any Progress
// prints its String() as a plain line and a Console can render it as a
// status line instead.
type Event struct {
	Stage   string        // what is being built: "rootfs"
	Step    int           // 1-based step number; 0 for the closing summary
	Steps   int           // number of steps in this build
	Name    string        // the step's name: "bootstrap"
	Detail  string        // the current phase within the step, or the summary; may be ""
	Elapsed time.Duration // since the build started
}

// String is the plain-line form: "rootfs: step 2/6: bootstrap: downloading packages".
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(e.Stage)
	if e.Step > 0 {
		fmt.Fprintf(&b, ": step %d/%d: %s", e.Step, e.Steps, e.Name)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// steps walks a build through a fixed list of named steps, reporting each
// through an image.Progress. The build's goroutine calls next; detail may
// also come from a goroutine reading a tool's output.
type steps struct {
	progress image.Progress
	stage    string
	names    []string
	cur      int // index into names of the current step, -1 before the first
	start    time.Time
	mu       sync.Mutex // guards cur for detail() called from an output reader
}

func newSteps(p image.Progress, stage string, names ...string) *steps {
	return &steps{progress: p, stage: stage, names: names, cur: -1, start: time.Now()}
}

// next moves to the next step, which must be called name.
func (s *steps) next(name string) {
	s.mu.Lock()
	s.cur++
	if s.cur >= len(s.names) || s.names[s.cur] != name {
		panic(fmt.Sprintf("template: step %q out of order (want %v)", name, s.names))
	}
	s.mu.Unlock()
	s.emit("")
}

// detail reports a phase within the current step.
func (s *steps) detail(format string, args ...any) {
	s.emit(fmt.Sprintf(format, args...))
}

// done reports the closing summary.
func (s *steps) done(format string, args ...any) {
	if s.progress == nil {
		return
	}
	s.progress("%v", Event{Stage: s.stage, Detail: fmt.Sprintf(format, args...), Elapsed: time.Since(s.start)})
}

func (s *steps) emit(detail string) {
	if s.progress == nil {
		return
	}
	s.mu.Lock()
	ev := Event{Stage: s.stage, Step: s.cur + 1, Steps: len(s.names), Detail: detail, Elapsed: time.Since(s.start)}
	if s.cur >= 0 {
		ev.Name = s.names[s.cur]
	}
	s.mu.Unlock()
	s.progress("%v", ev)
}

// Console renders progress for a person. On a terminal it keeps one status
// line updated in place (stage, step, elapsed time, current phase) and
// prints only summaries and other messages as lines of their own; anywhere
// else it prints every report as a plain line, which suits logs and CI.
//
// Use its Progress method as an image.Progress, and Close it when done.
// Safe for concurrent use.
type Console struct {
	w   io.Writer
	fd  int  // the terminal's fd, for its width; -1 if not a terminal
	tty bool // immutable after NewConsole

	mu        sync.Mutex // guards everything below
	cur       *Event     // the event on the status line; nil if none
	stepStart time.Time  // when cur's step began
	shown     bool       // a status line is on screen
	closed    bool

	stop chan struct{} // closed by Close to end the ticker
	wg   sync.WaitGroup
}

// NewConsole writes to f, rendering a status line when f is a terminal
// (usually os.Stderr).
func NewConsole(f *os.File) *Console {
	c := &Console{w: f, fd: -1, stop: make(chan struct{})}
	if fd := int(f.Fd()); term.IsTerminal(fd) {
		c.tty, c.fd = true, fd
		c.wg.Add(1)
		go c.tick()
	}
	return c
}

// Progress is an image.Progress.
func (c *Console) Progress(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev, isEvent := Event{}, false
	if len(args) == 1 {
		ev, isEvent = args[0].(Event)
	}
	if !c.tty || c.closed {
		fmt.Fprintf(c.w, format+"\n", args...)
		return
	}
	if !isEvent || ev.Step == 0 {
		// A message or summary: a line of its own above the status line.
		c.clearLocked()
		fmt.Fprintf(c.w, format+"\n", args...)
		if !isEvent {
			c.drawLocked()
		} else {
			c.cur = nil
		}
		return
	}
	if c.cur == nil || c.cur.Stage != ev.Stage || c.cur.Step != ev.Step {
		c.stepStart = time.Now()
	}
	c.cur = &ev
	c.drawLocked()
}

// Close stops the status line and leaves the terminal on a fresh line.
func (c *Console) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	close(c.stop)
	c.clearLocked()
	c.mu.Unlock()
	c.wg.Wait()
}

// tick redraws once a second so elapsed time moves during quiet phases.
func (c *Console) tick() {
	defer c.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.mu.Lock()
			if !c.closed {
				c.drawLocked()
			}
			c.mu.Unlock()
		}
	}
}

func (c *Console) drawLocked() {
	if c.cur == nil {
		return
	}
	e := c.cur
	line := fmt.Sprintf("%s [%d/%d] %s %s", e.Stage, e.Step, e.Steps, e.Name, time.Since(c.stepStart).Truncate(time.Second))
	if e.Detail != "" {
		line += ": " + e.Detail
	}
	width := 80
	if w, _, err := term.GetSize(c.fd); err == nil && w > 0 {
		width = w
	}
	if r := []rune(line); len(r) > width-1 {
		line = string(r[:width-1])
	}
	fmt.Fprintf(c.w, "\r\x1b[K%s", line)
	c.shown = true
}

func (c *Console) clearLocked() {
	if c.shown {
		fmt.Fprint(c.w, "\r\x1b[K")
		c.shown = false
	}
}
