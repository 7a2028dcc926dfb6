package redactworld

import (
	"strings"

	rc "github.com/airlock-dev/airlock/internal/docseval/redactcorpus"
)

// pageKinds are the page layouts, in turn.
var pageKinds = []func(*gen, *rc.PageWriter){twoColumns, staffTable, tenancyForm, letterPage}

func pt(s string) rc.Part      { return rc.Part{Text: s} }
func pe(typ, s string) rc.Part { return rc.Part{Type: typ, Text: s} }
func (g *gen) settable(w *rc.PageWriter) person {
	for range 20 {
		p := g.nextPerson()
		if w.CanSet(p.full()) {
			return p
		}
	}
	return person{given: g.pick(wordNames), family: "Okonkwo"}
}

// safe draws a value the page fonts can set.
func safe(w *rc.PageWriter, draw func() string) string {
	for range 20 {
		if v := draw(); w.CanSet(v) {
			return v
		}
	}
	return draw()
}

// twoColumns: a newsletter page, two columns of running text with names
// in context, a contact list, and footnotes at the foot.
func twoColumns(g *gen, w *rc.PageWriter) {
	c := g.country()
	a, b, wn := g.settable(w), g.settable(w), g.wordNamed()
	for !w.CanSet(wn.full()) {
		wn = g.wordNamed()
	}
	w.Line(54, 60, 16, true, pt("Residents' Newsletter"))
	y := 96.0
	w.Para(54, &y, 240, 10, 13, pt("Our thanks go to"), pe(tPerson, a.full()), pt("for a year as chair. "),
		pe(tPerson, wn.given), pt(g.any(saidVerbs)+" the garden will reopen in spring.¹ We"), pt(" hope to see everyone there, and we will mark the date."))
	w.Miss("word_not_name")
	y += 8
	w.Para(54, &y, 240, 10, 13, pt("The council in"), pt(g.any(placeNames)), pt("has agreed to fund the repairs."))
	w.Miss("place")
	y2 := 96.0
	w.Line(318, y2, 11, true, pt("Contacts"))
	y2 += 16
	w.Line(318, y2, 10, false, pe(tPerson, a.full()), pt(": "), pe(tPhone, g.phone(c)))
	y2 += 14
	w.Line(318, y2, 10, false, pe(tPerson, b.full()), pt(": "), pe(tEmail, safe(w, func() string { return g.email(b) })))
	y2 += 14
	w.Para(318, &y2, 240, 10, 13, pt("Post to the secretary at"), pe(tAddress, safe(w, func() string { return strings.Join(g.address(c), ", ") })), pt("."))
	w.Line(54, 700, 8, false, pt("¹ As reported by"), pt(" "), pe(tPerson, wn.full()), pt(" at the meeting of "), pt(g.plainDate()), pt("."))
	w.Miss("date_not_birth")
}

// staffTable: a directory with ruled rows, names as registers write
// them, international numbers, and office cities that are not people.
func staffTable(g *gen, w *rc.PageWriter) {
	w.Line(54, 60, 14, true, pt("Staff directory"))
	cols := []float64{54, 220, 330, 470}
	y := 96.0
	for k, h := range []string{"Name", "Role", "Direct line", "Office"} {
		w.Line(cols[k], y, 10, true, pt(h))
	}
	w.Rule(54, y+5, 560, y+5)
	for i := 0; i < 5; i++ {
		y += 20
		p := g.settable(w)
		c := g.country()
		name := p.full()
		if g.chance(0.4) {
			name = p.formal()
		}
		w.Line(cols[0], y, 10, false, pe(tPerson, name))
		w.Line(cols[1], y, 10, false, pt(g.any([]string{"Caseworker", "Paralegal", "Clerk", "Director"})))
		w.Line(cols[2], y, 10, false, pe(tPhone, g.phone(c)))
		w.Line(cols[3], y, 10, false, pt(g.any([]string{"Florence", "Victoria", "Hamilton", "Charlotte", "Adelaide", "Wellington"})))
		w.Miss("office_city")
		w.Rule(54, y+5, 560, y+5)
	}
}

// tenancyForm: labels in a left column, values (an address over three
// lines) in the right.
func tenancyForm(g *gen, w *rc.PageWriter) {
	c := g.country()
	p, prev := g.settable(w), g.settable(w)
	w.Line(54, 60, 14, true, pt("APPLICATION FOR TENANCY"))
	y := 100.0
	row := func(label string, parts ...rc.Part) {
		w.Line(54, y, 10, true, pt(label))
		w.Line(200, y, 10, false, parts...)
		y += 18
	}
	row("Full name", pe(tPerson, p.full()))
	dob := safe(w, func() string { s, _ := g.birth(); return s })
	row("Date of birth", pe(tDOB, dob))
	lines := safe(w, func() string { return strings.Join(g.address(c), "\n") })
	for i, l := range strings.Split(lines, "\n") {
		label := ""
		if i == 0 {
			label = "Current address"
		}
		if label != "" {
			row(label, pe(tAddress, l))
		} else {
			w.Line(200, y, 10, false, pe(tAddress, l))
			y += 18
		}
	}
	row("Telephone", pe(tPhone, g.phone(c)))
	row("Email", pe(tEmail, safe(w, func() string { return g.email(p) })))
	row("Previous landlord", pe(tPerson, prev.full()))
	row("Signed", pt("(signature)"), pt("  Date: "), pt(g.plainDate()))
	w.Miss("date_not_birth")
}

// letterPage: a letter with the sender's and the recipient's address
// blocks, a body that names people in context, and a signature.
func letterPage(g *gen, w *rc.PageWriter) {
	c := g.country()
	from, to, other := g.settable(w), g.settable(w), g.settable(w)
	y := 60.0
	w.Line(360, y, 10, false, pe(tPerson, from.full()))
	for _, l := range strings.Split(safe(w, func() string { return strings.Join(g.address(c), "\n") }), "\n") {
		y += 13
		w.Line(360, y, 10, false, pe(tAddress, l))
	}
	y += 13
	w.Line(360, y, 10, false, pe(tPhone, g.phone(c)))
	y += 40
	w.Line(54, y, 10, false, pt(g.any(titlesEN)+" "), pe(tPerson, to.full()))
	for _, l := range strings.Split(safe(w, func() string { return strings.Join(g.address(c), "\n") }), "\n") {
		y += 13
		w.Line(54, y, 10, false, pe(tAddress, l))
	}
	y += 30
	w.Line(54, y, 10, false, pt("Dear "), pe(tPerson, to.given), pt(","))
	y += 22
	dob := safe(w, func() string { s, _ := g.birth(); return s })
	w.Para(54, &y, 480, 10, 13, pt("I write on behalf of"), pe(tPerson, other.full()), pt("(born"), pe(tDOB, dob),
		pt("), who has lived at the flat since 2019."))
	w.Para(54, &y, 480, 10, 13, pt("Please reply to me rather than to the office in"), pt(g.any(placeNames)), pt("."))
	w.Miss("place")
	y += 20
	w.Line(54, y, 10, false, pt("Yours sincerely,"))
	y += 30
	w.Line(54, y, 10, false, pe(tPerson, from.full()))
}
