package testdocs

// A document comes in one of two shapes: Flow (blocks of text the renderer
// wraps and paginates, for contracts and letters) or Fixed (text placed at
// positions on each page, for invoices and forms).

// BlockKind is how a Flow block is set.
type BlockKind int

const (
	Paragraph BlockKind = iota // body text, wrapped to the text width
	Heading                    // bold, a little larger, kept with the next block
	Title                      // centred, large, bold
	PageBreak                  // starts a new page; Text is ignored
)

// Block is one paragraph-like unit of a Flow document.
type Block struct {
	Kind   BlockKind
	Text   string  // UTF-8; wrapped at spaces (and hyphenated when Flow.Hyphenate)
	Indent float64 // left indent in points
	Bold   bool    // for Paragraph: the whole block bold (run-in headings use RunIn)
	// RunIn, when set, is printed bold at the start of the paragraph
	// ("7. Limitation of Liability.") with Text following on the same line.
	RunIn string
}

// Flow is a document the renderer paginates on US Letter (612x792 pt)
// with 72 pt margins.
type Flow struct {
	Blocks []Block
	// Header and Footer are running lines on every page; "{page}" and
	// "{pages}" are replaced by the page number and count.
	Header, Footer string
	FontSize       float64 // body size in points; 0 = 11
	// Hyphenate breaks long words across lines with a hyphen (so extraction
	// must re-join them).
	Hyphenate bool
	Meta      Meta
}

// Hidden marks text that is in the text layer but must not be visible.
type Hidden int

const (
	Visible    Hidden = iota
	White             // white fill on the white page
	NearWhite         // fill #FAFAFA
	Tiny              // 1 pt
	OffPage           // placed outside the page's box
	UnderImage        // covered by an opaque image drawn after it
)

// Item is one run of text at a position on a Fixed page.
type Item struct {
	X, Y   float64 // points from the top left; Y is the baseline
	Text   string
	Size   float64 // points; 0 = 10
	Bold   bool
	Align  Align   // how X anchors the text
	Gray   float64 // 0 = black .. 1 = white (for faint but visible print)
	Hidden Hidden
}

// Align anchors an Item's X.
type Align int

const (
	Left Align = iota
	Right
	Center
)

// Rule is a straight line on a Fixed page (table borders).
type Rule struct {
	X1, Y1, X2, Y2 float64
	Width          float64 // points; 0 = 0.5
}

// FixedPage is one page of positioned text.
type FixedPage struct {
	Items []Item
	Rules []Rule
}

// Fixed is a document of positioned pages, US Letter unless Width/Height
// are set (points).
type Fixed struct {
	Pages         []FixedPage
	Width, Height float64
	Meta          Meta
}

// Meta is the PDF's Info dictionary (and nothing else: no XMP unless set).
type Meta struct {
	Title, Author, Subject, Keywords, Creator string
}

// Scan describes how a page image is degraded to look scanned or
// photographed.
type Scan struct {
	DPI      int     // 0 = 200
	Skew     float64 // degrees, positive = clockwise
	Noise    float64 // 0..1: salt-and-pepper density scaled, plus gray jitter
	Blur     float64 // 0..3: box-blur radius in pixels at DPI
	JPEG     int     // 0 = lossless; else JPEG quality 1..100 applied to the image
	Bilevel  bool    // threshold to black/white (fax)
	Darkness float64 // 0..1 background tint (photos, old paper)
	Seed     int64   // deterministic noise
}
