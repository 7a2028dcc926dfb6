package jobs

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress is a one-line live status for a terminal: a bar, counts and
// throughput, redrawn in place. It writes nothing when w is nil.
type progress struct {
	w     io.Writer
	job   string
	total int
	began time.Time
}

func newProgress(w io.Writer, job string, total int) *progress {
	p := &progress{w: w, job: job, total: total, began: time.Now()}
	p.update(Summary{})
	return p
}

const barWidth = 24

func (p *progress) update(s Summary) {
	if p.w == nil || p.total == 0 {
		return
	}
	done := s.OK + s.Failed
	filled := barWidth * done / p.total
	rate := 0.0
	if el := time.Since(p.began); el > 0 && done > 0 {
		rate = float64(done) / el.Minutes()
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d  ok %d  failed %d  %.1f/min ", p.job,
		strings.Repeat("=", filled), strings.Repeat(" ", barWidth-filled), done, p.total, s.OK, s.Failed, rate)
}

func (p *progress) done() {
	if p.w != nil && p.total > 0 {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
