package redactcorpus

// PageWriter lays out a page document for another corpus (the second
// redaction corpus, internal/docseval/redactworld, writes its own
// documents but must measure and record words exactly as this package
// does, or its truth boxes would not be where the renderer puts the
// words). Coordinates are points, origin top left, y the baseline.
type PageWriter struct {
	b  *builder
	pb *pageBuilder
}

// Part is a run of text on a line: plain (Type "") or an entity.
type Part struct{ Type, Text string }

// NewPageWriter starts a page document on its first page.
func NewPageWriter() *PageWriter {
	b := newBuilder()
	return &PageWriter{b: b, pb: newPageBuilder(b)}
}

// Line places parts as one line (one extracted line) at (x, y).
func (w *PageWriter) Line(x, y, size float64, bold bool, parts ...Part) {
	w.pb.item(x, y, size, bold, toParts(parts)...)
}

// Para sets parts as a paragraph wrapped to width from (x, *y), moving *y
// down by lead per line and onto a new page past the bottom margin.
func (w *PageWriter) Para(x float64, y *float64, width, size, lead float64, parts ...Part) {
	w.pb.para(x, y, width, size, lead, toParts(parts)...)
}

// Width is s's advance width at size, as the renderer sets it.
func (w *PageWriter) Width(s string, bold bool, size float64) float64 {
	return w.pb.m.width(s, bold, size)
}

// NewPage starts the next page.
func (w *PageWriter) NewPage() { w.pb.newPage() }

// Rule draws a line (a table border).
func (w *PageWriter) Rule(x1, y1, x2, y2 float64) { w.pb.rule(x1, y1, x2, y2) }

// Scanned makes the document a scan degraded in one of the ways this
// corpus's scans are (office scan, fax, phone photo), drawn from seed.
func (w *PageWriter) Scanned(seed int64) { w.pb.scanned(newGen(seed)) }

// Miss counts a near miss of the given kind placed in the document.
func (w *PageWriter) Miss(kind string) { w.b.near[kind]++ }

// Doc returns the page document under name, with the canaries planted
// in it.
func (w *PageWriter) Doc(name string, canaries []string) Doc {
	w.b.canaries = canaries
	d := w.b.doc(name, "page")
	d.Page = w.pb.pd
	return d
}

func toParts(ps []Part) []part {
	out := make([]part, len(ps))
	for i, p := range ps {
		out[i] = part{p.Type, p.Text}
	}
	return out
}

// CanSet reports whether the renderer's fonts have every glyph of s (a
// page document can only hold text they can set).
func (w *PageWriter) CanSet(s string) bool {
	for _, r := range s {
		if r == ' ' {
			continue
		}
		idx, err := w.pb.m.regular.GlyphIndex(&w.pb.m.buf, r)
		if err != nil || idx == 0 {
			return false
		}
	}
	return true
}
