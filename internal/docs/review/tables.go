package review

import (
	"bufio"
	"embed"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed data/*.txt
var dataFS embed.FS

// tables are the word lists the analysis uses, read from the embedded
// data files once. They are never written after loadTables returns, so
// sharing them between concurrent Analyze calls is safe.
type tables struct {
	numbers     map[string]float64 // folded number word -> value
	numberWords []string           // the keys of numbers, sorted
	termWords   map[string]bool    // folded words of key terms: number words, units, currencies, places
	termByLen   map[int][]string   // termWords by length
	places      []place            // longest first
	protected   map[string]bool    // folded protected words
	common      map[string]bool    // folded common English words
	confusions  map[[2]rune]bool   // both orders
	confusable  [128][128]bool     // confusions between ASCII letters, for the inner loop of distance
	// pairs[a][b] has bit (c-'a') set when OCR reads letter c as "ab" (or
	// "ab" as c): rn/m, cl/d, vv/w.
	pairs       [128][128]uint32
	placeMaxLen int // longest place, in words
}

type place struct {
	words     []string // folded
	canonical string
}

var getTables = sync.OnceValue(func() *tables {
	t, err := loadTables()
	if err != nil {
		// The files are embedded and covered by tests: failing here is a
		// build defect, not a runtime condition.
		panic(err)
	}
	return t
})

func loadTables() (*tables, error) {
	t := &tables{
		numbers:    map[string]float64{},
		protected:  map[string]bool{},
		common:     map[string]bool{},
		confusions: map[[2]rune]bool{},
	}
	err := readLines("data/numbers.txt", func(f []string) error {
		if len(f) != 2 {
			return fmt.Errorf("want word and value")
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return err
		}
		t.numbers[foldWord(f[0])] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := readLines("data/protected.txt", func(f []string) error {
		t.protected[foldWord(f[0])] = true
		return nil
	}); err != nil {
		return nil, err
	}
	if err := readLines("data/common_words.txt", func(f []string) error {
		for _, w := range f {
			t.common[foldWord(w)] = true
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := readLines("data/ocr_confusions.txt", func(f []string) error {
		if len(f) == 2 && len([]rune(f[0])) == 1 && len([]rune(f[1])) == 2 {
			// Compared words are folded (i is l), so the pairs are too.
			one, two := []rune(foldPlain(f[0])), []rune(foldPlain(f[1]))
			if !isLower(one[0]) || two[0] >= 128 || two[1] >= 128 {
				return fmt.Errorf("two-letter confusions are between ASCII letters")
			}
			t.pairs[two[0]][two[1]] |= 1 << (one[0] - 'a')
			return nil
		}
		if len(f) != 2 || len([]rune(f[0])) != 1 || len([]rune(f[1])) != 1 {
			return fmt.Errorf("want two single letters, or a letter and the two it is read as")
		}
		a, b := []rune(f[0])[0], []rune(f[1])[0]
		t.confusions[[2]rune{a, b}] = true
		t.confusions[[2]rune{b, a}] = true
		if a < 128 && b < 128 {
			t.confusable[a][b], t.confusable[b][a] = true, true
		}
		return nil
	}); err != nil {
		return nil, err
	}
	t.numberWords = slices.Sorted(maps.Keys(t.numbers))
	t.addTermWords()
	if err := t.loadPlaces(); err != nil {
		return nil, err
	}
	return t, nil
}

// addTermWords collects the words key terms are made of (places are
// added by loadPlaces).
func (t *tables) addTermWords() {
	t.termWords = map[string]bool{}
	for _, w := range t.numberWords {
		t.termWords[w] = true
	}
	for _, m := range []map[string]string{durationUnits, currencyWords} {
		for w := range m {
			t.termWords[foldWord(w)] = true
		}
	}
	for _, w := range []string{"percent", "times", "business", "calendar", "working"} {
		t.termWords[foldWord(w)] = true
	}
}

func (t *tables) loadPlaces() error {
	err := readRawLines("data/jurisdictions.txt", func(line string) error {
		names := strings.Split(line, "|")
		canonical := strings.TrimSpace(names[0])
		for _, n := range names {
			words := keyWords(n)
			if len(words) == 0 {
				return fmt.Errorf("empty place name")
			}
			t.places = append(t.places, place{words: words, canonical: canonical})
			t.placeMaxLen = max(t.placeMaxLen, len(words))
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.SliceStable(t.places, func(i, j int) bool { return len(t.places[i].words) > len(t.places[j].words) })
	for _, p := range t.places {
		for _, w := range p.words {
			if len(w) >= 4 {
				t.termWords[w] = true // so "Cou nty" is joined again
			}
		}
	}
	t.termByLen = map[int][]string{}
	for w := range t.termWords {
		t.termByLen[len(w)] = append(t.termByLen[len(w)], w)
	}
	return nil
}

// readLines calls fn with the whitespace-separated fields of every
// non-blank, non-comment line of an embedded data file.
func readLines(name string, fn func([]string) error) error {
	return readRawLines(name, func(line string) error { return fn(strings.Fields(line)) })
}

func readRawLines(name string, fn func(string) error) error {
	f, err := dataFS.Open(name)
	if err != nil {
		return fmt.Errorf("embedded %s: %w", name, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("embedded %s:%d: %w", name, n, err)
		}
	}
	return sc.Err()
}

// distance is an edit distance where a substitution between letters OCR
// confuses costs 0.25 (one letter for another, or two for one: "rn" for
// m, "cl" for d, "ri" for n, "vv" for w) and any other edit 1.
func (t *tables) distance(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j], kept three rows
	// deep for the two-letter confusions.
	var buf [3][32]float64
	rows := [3][]float64{}
	for k := range rows {
		if len(rb) < 32 {
			rows[k] = buf[k][:len(rb)+1]
		} else {
			rows[k] = make([]float64, len(rb)+1)
		}
	}
	for j := range rows[0] {
		rows[0][j] = float64(j)
	}
	for i := 1; i <= len(ra); i++ {
		cur, prev, prev2 := rows[i%3], rows[(i+2)%3], rows[(i+1)%3]
		cur[0] = float64(i)
		for j := 1; j <= len(rb); j++ {
			x, y := ra[i-1], rb[j-1]
			sub := 1.0
			switch {
			case x == y:
				sub = 0
			case t.isConfusion(x, y):
				sub = 0.25
			}
			d := min(prev[j-1]+sub, prev[j]+1, cur[j-1]+1)
			if j >= 2 && t.isPair(x, rb[j-2], y) {
				d = min(d, prev[j-2]+0.25) // one letter read as two
			}
			if i >= 2 && t.isPair(y, ra[i-2], x) {
				d = min(d, prev2[j-1]+0.25) // two letters read as one
			}
			cur[j] = d
		}
	}
	return rows[len(ra)%3][len(rb)]
}

func (t *tables) isConfusion(a, b rune) bool {
	if a < 128 && b < 128 {
		return t.confusable[a][b]
	}
	return t.confusions[[2]rune{a, b}]
}

// isPair reports whether OCR reads letter c as "ab".
func (t *tables) isPair(c, a, b rune) bool {
	return isLower(c) && a < 128 && b < 128 && t.pairs[a][b]&(1<<(c-'a')) != 0
}

func isLower(r rune) bool { return r >= 'a' && r <= 'z' }

// ocrEqual reports whether a word (a fold key) read from the document is
// a listed word, allowing for misread letters: one confusable letter in
// a word of three letters, two in a longer one. Key-term words (units,
// number words, places) are looked up this way so that "davs" is still
// days and "Ncw York" still New York.
func (t *tables) ocrEqual(read, listed string) bool {
	if read == listed {
		return true
	}
	n := len(listed)
	if n < 3 || len(read) < n-1 || len(read) > n+1 {
		return false
	}
	budget := 2 // confusable letters allowed
	if n == 3 {
		budget = 1
	}
	if len(read) == n {
		// Same length: within budget no insertion or deletion fits, so
		// compare letter by letter (the common case, without the DP).
		for i := 0; i < n; i++ {
			if read[i] != listed[i] {
				if budget == 0 || !t.isConfusion(rune(read[i]), rune(listed[i])) {
					return false
				}
				budget--
			}
		}
		return true
	}
	// One letter more or less: only a two-letter misreading ("rn" for m)
	// fits the budget, so all but about three letters match at the ends.
	short := min(len(read), n)
	pre, suf := 0, 0
	for pre < short && read[pre] == listed[pre] {
		pre++
	}
	for suf < short-pre && read[len(read)-1-suf] == listed[n-1-suf] {
		suf++
	}
	if pre+suf < short-2 {
		return false
	}
	return t.distance(read, listed) <= 0.25*float64(budget)
}

// isTermWord reports a key-term word, allowing for misread letters.
func (t *tables) isTermWord(w string) bool {
	if t.termWords[w] {
		return true
	}
	for n := len(w) - 1; n <= len(w)+1; n++ {
		for _, k := range t.termByLen[n] {
			if t.ocrEqual(w, k) {
				return true
			}
		}
	}
	return false
}
