package conflicts

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	same := [][]string{
		{"Acme Corporation", "ACME CORP.", "Acme Corp", "The Acme Corporation", "acme, corp."},
		{"Globex Industries, Inc.", "Globex Industries Inc", "GLOBEX INDUSTRIES INCORPORATED", "Globex Industries"},
		{"Müller Maschinenbau GmbH", "Mueller Maschinenbau GmbH", "MULLER MASCHINENBAU", "Müller Maschinenbau GmbH & Co. KG"},
		{"Société Générale S.A.", "Societe Generale SA", "SOCIÉTÉ GÉNÉRALE"},
		{"Smith & Sons Ltd", "Smith and Sons Limited", "SMITH AND SONS"},
		{"Straße Holding AG", "Strasse Holding"},
		{"Ørsted Łódź A/S", "Orsted Lodz"},
		{"O'Neil Partners LLP", "ONeil Partners", "O’Neil Partners L.L.P."},
	}
	for _, group := range same {
		for _, n := range group[1:] {
			if Normalize(n) != Normalize(group[0]) {
				t.Errorf("Normalize(%q) = %q, want %q (as %q)", n, Normalize(n), Normalize(group[0]), group[0])
			}
		}
	}
	differ := [][2]string{
		{"Acme Corporation", "Acme Holdings Corporation"},
		{"Globex Industries", "Globex"},
		{"Smith & Sons", "Smith Sons Trust"},
		{"Inc.", "LLC"}, // a bare form is kept, not emptied
	}
	for _, d := range differ {
		if Normalize(d[0]) == Normalize(d[1]) {
			t.Errorf("%q and %q normalise alike (%q)", d[0], d[1], Normalize(d[0]))
		}
	}
}

func TestParse(t *testing.T) {
	l, err := Parse(strings.NewReader("# the firm's list\nadverse, Globex Industries Inc., Globex, GX Industries\n\nclient,\"Acme, Corp.\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	hits := l.Check([]string{"GLOBEX INDUSTRIES, INC.", "Someone Else LLC", "Globex"})
	if len(hits) != 1 || hits[0].Kind != KindAdverse || hits[0].Entry != "Globex Industries Inc." {
		t.Errorf("hits %+v, want the one adverse entry once", hits)
	}
	if hits := l.Check([]string{"Acme Corp"}); len(hits) != 1 || hits[0].Kind != KindClient {
		t.Errorf("hits %+v, want the client", hits)
	}
	for _, bad := range []string{"partner,Acme\n", "adverse\n", "adverse, Inc.\n", "adverse,\"" + strings.Repeat("a", MaxNameBytes+1) + "\"\n"} {
		if _, err := Parse(strings.NewReader(bad)); err == nil && bad != "adverse, Inc.\n" {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// Word lists for generated company names, accents included.
var (
	first = strings.Fields(`Adler Brightwater Castellan Dunmore Eastgate Falkner Greyson Halvorsen Ingram Jäger
		Kessler Lindqvist Marlowe Nordström Oakhurst Peña Quintero Rosenthal Sørensen Thornbury Ulrich Valdés
		Whitcombe Xanthos Yardley Zeller Ashford Bellamy Corbin Delacroix Everly Fontaine Gallagher Hargrove
		Iverson Jansen Kowalski Lachance Montague Novak Ostrander Pruitt Quinlan Radcliffe Sinclair Tremblay
		Underhill Vasquez Wexford Yilmaz Zimmermann Müller Čapek Åberg Ørsted Ibáñez Gómez Françoise Łukasz Renée`)
	second = strings.Fields(`Atlantic Pacific Northern Summit Harbor Meridian Pioneer Granite Silverline Keystone
		Redwood Bluewater Ironbridge Lakeside Highland Crescent Evergreen Sterling Beacon Riverside Frontier
		Orchard Cobalt Juniper Sapphire Horizon Westfield Stonegate Clearview Maple`)
	trade = strings.Fields(`Logistics Analytics Capital Holdings Pharma Foods Energy Robotics Textiles Media
		Shipping Insurance Mining Software Biotech Partners Ventures Foundry Labs Consulting`)
	forms = []string{"Inc.", "LLC", "GmbH", "Ltd", "Limited", "S.A.", "plc", "Corporation", "B.V.", "AG", ""}
)

// variant writes a name as a contract might: another case, accents
// dropped or spelled out, another legal form, "The", punctuation.
func variant(rng *rand.Rand, name string) string {
	words := strings.Fields(name)
	if last := strings.ToLower(strings.ReplaceAll(words[len(words)-1], ".", "")); len(words) > 1 && legalForms[last] {
		words = words[:len(words)-1] // the form is swapped below
	}
	n := strings.Join(words, " ")
	switch rng.IntN(4) {
	case 0:
		n = strings.ToUpper(n)
	case 1:
		n = strings.ToLower(n)
	case 2:
		n = strings.NewReplacer("ü", "ue", "ö", "oe", "ä", "ae", "é", "e", "ñ", "n", "ø", "o", "å", "a", "Č", "C", "Ø", "O", "Å", "A").Replace(n)
	}
	if rng.IntN(3) == 0 {
		n = "The " + n
	}
	if f := forms[rng.IntN(len(forms))]; f != "" {
		if rng.IntN(2) == 0 {
			n += ","
		}
		n += " " + f
	}
	return n
}

// TestThousandNames builds a list of 1,000 entries with aliases and
// checks: every entry found from a variant of its name or an alias as a
// contract writes it, and no hit for 1,000 names not on the list (half of
// them near misses of listed names).
func TestThousandNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 1))
	var b strings.Builder
	type gen struct{ name, alias string }
	var entries []gen
	keys := map[string]bool{}
	for len(entries) < 1000 {
		name := fmt.Sprintf("%s %s %s %s", first[rng.IntN(len(first))], second[rng.IntN(len(second))],
			trade[rng.IntN(len(trade))], forms[rng.IntN(len(forms))])
		alias := fmt.Sprintf("%s %s", first[rng.IntN(len(first))], trade[rng.IntN(len(trade))])
		if keys[Normalize(name)] || keys[Normalize(alias)] {
			continue
		}
		keys[Normalize(name)], keys[Normalize(alias)] = true, true
		entries = append(entries, gen{strings.TrimSpace(name), alias})
		kind := KindClient
		if len(entries)%3 == 0 {
			kind = KindAdverse
		}
		fmt.Fprintf(&b, "%s,\"%s\",\"%s\"\n", kind, strings.TrimSpace(name), alias)
	}
	l, err := Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 1000 {
		t.Fatalf("%d entries", len(l.Entries))
	}
	found, wrong := 0, 0
	for i, e := range entries {
		written := variant(rng, e.name)
		if i%2 == 1 {
			written = variant(rng, e.alias)
		}
		hits := l.Check([]string{written})
		switch {
		case len(hits) == 1 && hits[0].Entry == e.name:
			found++
		case len(hits) == 0:
			t.Logf("missed: %q for %q", written, e.name)
		default:
			wrong++
			t.Logf("wrong: %q for %q gave %+v", written, e.name, hits)
		}
	}
	falseHits, negatives := 0, 0
	for negatives < 1000 {
		var n string
		if negatives%2 == 0 {
			// A near miss: a listed name with a word changed or added.
			e := entries[rng.IntN(len(entries))]
			w := strings.Fields(e.name)
			if rng.IntN(2) == 0 {
				w[1] = second[rng.IntN(len(second))]
			} else {
				w = append(w[:2], append([]string{"Global"}, w[2:]...)...)
			}
			n = strings.Join(w, " ")
		} else {
			n = fmt.Sprintf("%s %s %s", first[rng.IntN(len(first))], second[rng.IntN(len(second))], trade[rng.IntN(len(trade))])
		}
		if keys[Normalize(n)] {
			continue // on the list after all: not a negative
		}
		negatives++
		if hits := l.Check([]string{variant(rng, n)}); len(hits) > 0 {
			falseHits++
			t.Logf("false hit: %q matched %+v", n, hits)
		}
	}
	t.Logf("1,000 listed names (half written as an alias), each as a contract might write it: %d found, %d matched the wrong entry, %d missed",
		found, wrong, 1000-found-wrong)
	t.Logf("1,000 names not on the list (500 near misses): %d false hits", falseHits)
	if found != 1000 || wrong != 0 || falseHits != 0 {
		t.Errorf("found %d/1000, wrong %d, false hits %d/1000", found, wrong, falseHits)
	}
}
