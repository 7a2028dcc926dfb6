package facts

import (
	"regexp"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// roles are the labels that name a party's capacity rather than the party.
var roles = map[string]bool{
	"customer": true, "supplier": true, "provider": true, "service provider": true, "vendor": true, "licensor": true,
	"licensee": true, "buyer": true, "seller": true, "purchaser": true, "client": true, "contractor": true,
	"consultant": true, "company": true, "employer": true, "employee": true, "discloser": true, "recipient": true,
	"disclosing party": true, "receiving party": true, "lessor": true, "lessee": true, "landlord": true,
	"tenant": true, "distributor": true, "reseller": true, "processor": true, "controller": true, "lender": true,
	"borrower": true, "agency": true, "partner": true, "manufacturer": true, "subcontractor": true,
}

var (
	// quotedParenRE is a parenthesis holding at least one quoted label, in
	// double quotes or single ones around a capitalised label (UK
	// drafting), or the mix of the two tesseract reads off curly quotes
	// ((the “Consultant’)).
	quotedParenRE = regexp.MustCompile(`\(([^()]*(?:["“]|[‘'’][A-Z])[^()]*)\)`)
	quotedRE      = regexp.MustCompile(`["“]([^"”]{1,80})["”]|["“‘'’]([A-Z][^'’‘"“”]{0,79})["”'’]`)
	// unopenedRE is a label whose opening quote OCR lost: (Effective Date").
	unopenedRE = regexp.MustCompile(`^\s*(?:the\s+)?([A-Z][^'’‘"“”]{0,79})["”’]\s*$`)
	// roleParenRE is an unquoted label: "(the Client)", "(Supplier)".
	roleParenRE = regexp.MustCompile(`\((?:the\s+)?([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)\)`)
	// signedRoleRE is "J. Alvarez (Client)" on a signature line.
	signedRoleRE = regexp.MustCompile(`([A-Z][\p{L}.'-]*(?:\s+[A-Z][\p{L}.'-]*){0,3})\s*\(([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)\)`)
	// nameEndRE ends a party's name: the start of its description.
	nameEndRE  = regexp.MustCompile(`(?:,\s+(?:a|an|the|having|with|whose|located|incorporated|registered|organi[sz]ed|of|acting|residing|company|registration|duly)\b|\s+\(|,?\s+(?:a|an)\s+(?:[A-Z][a-z]+\s+)*(?:corporation|company|limited|partnership|GmbH)\b)`)
	addressRE  = regexp.MustCompile(`(?i)(?:(?:corporation|company|partnership|limited|GmbH|individual)\s+of|principal (?:place of business|office|offices|executive offices)|registered (?:office|address)|offices|office|address|located|residing)\s+(?:is\s+|are\s+)?(?:at|in|)\s*(.+?)\s*(?:\(|;|$|,\s+(?:and|acting|represented|registered)\b)`)
	listItemRE = regexp.MustCompile(`^\s*(?:\(\d+\)|\d+[.)]|\([a-z]\)|[a-z][.)])\s+`)
	leadRE     = regexp.MustCompile(`^(?:[,;:]?\s*(?:and|AND)\s+|[,;:]\s*)`)
	nameLineRE = regexp.MustCompile(`(?i)^\s*(?:name|print name|printed name)\s*:\s*(.+?)\s*$`)
	byLineRE   = regexp.MustCompile(`(?i)^\s*by\s*:\s*(?:/s/\s*)?([A-Z][^_]*?)\s*$`)
	signedByRE = regexp.MustCompile(`(?i)signed by\s+([^,]+?)\s*,?\s+(?:[^,]+,\s+)?for and on behalf of\s+(.+?)\s*$`)
)

// parties reads the preamble: the parties' chunks after "between" (or the
// numbered items of a PARTIES block), each a name and its description
// ending in a parenthesis of quoted labels.
func extractParties(paras []Paragraph) []result.Party {
	var chunks []string
	limit := min(len(paras), 12)
	for i := 0; i < limit && len(chunks) == 0; i++ {
		t := strings.Join(strings.Fields(paras[i].Text), " ")
		if idx := strings.Index(strings.ToLower(t), "between"); idx >= 0 && (quotedParenRE.MatchString(t[idx:]) || roleParenRE.MatchString(t[idx:])) {
			chunks = splitChunks(t[idx+len("between"):])
			continue
		}
		if strings.EqualFold(strings.TrimRight(t, ":"), "parties") || strings.EqualFold(strings.TrimRight(t, ":"), "between") {
			for j := i + 1; j < len(paras) && j < i+8; j++ {
				u := strings.Join(strings.Fields(paras[j].Text), " ")
				if !listItemRE.MatchString(u) {
					break
				}
				chunks = append(chunks, splitChunks(listItemRE.ReplaceAllString(u, ""))...)
			}
		}
	}
	var out []result.Party
	for _, c := range chunks {
		p, ok := partyFromChunk(c)
		if ok && len(out) < result.MaxParties {
			out = append(out, p)
		}
	}
	findSignatories(paras, out)
	return out
}

// splitChunks cuts text after each parenthesis of quoted labels.
func splitChunks(s string) []string {
	var out []string
	re := quotedParenRE
	if !re.MatchString(s) {
		re = roleParenRE // "between X (the Client) and Y (the Supplier)"
	}
	for {
		loc := re.FindStringIndex(s)
		if loc == nil {
			return out
		}
		c := strings.TrimSpace(leadRE.ReplaceAllString(strings.TrimSpace(s[:loc[1]]), ""))
		if c != "" {
			out = append(out, c)
		}
		s = s[loc[1]:]
	}
}

func partyFromChunk(c string) (result.Party, bool) {
	var p result.Party
	paren := quotedParenRE.FindAllStringSubmatchIndex(c, -1)
	var labels []string
	var last []int
	if paren != nil {
		last = paren[len(paren)-1]
		labels = quotedLabels(c[last[2]:last[3]])
	} else if rp := roleParenRE.FindAllStringSubmatchIndex(c, -1); rp != nil {
		last = rp[len(rp)-1]
		labels = []string{c[last[2]:last[3]]}
	} else {
		return p, false
	}
	for _, label := range labels {
		label = strings.TrimSpace(label)
		if roles[strings.ToLower(label)] && p.Role == "" {
			p.Role = label
		} else if p.ShortName == "" {
			p.ShortName = label
		}
	}
	body := strings.TrimSpace(c[:last[0]])
	name := body
	if loc := nameEndRE.FindStringIndex(body); loc != nil {
		name = body[:loc[0]]
	}
	name = strings.Trim(strings.TrimSpace(name), ",;")
	if name == "" || len(strings.Fields(name)) > 12 {
		return p, false
	}
	p.Name = bound(name, result.MaxPartyFieldBytes)
	if m := addressRE.FindStringSubmatch(body); m != nil {
		p.Address = bound(strings.Trim(m[1], " ,;"), result.MaxPartyFieldBytes)
	}
	return p, true
}

// quotedLabels are the quoted labels in a parenthesis's text.
func quotedLabels(s string) []string {
	var out []string
	for _, q := range quotedRE.FindAllStringSubmatch(s, -1) {
		out = append(out, q[1]+q[2])
	}
	if out == nil {
		if m := unopenedRE.FindStringSubmatch(s); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// findSignatories reads the signature blocks: a line naming the party
// (its name, short name or role), then "By:" / "Name:" lines; or
// "Signed by X ... for and on behalf of Y".
func findSignatories(paras []Paragraph, parties []result.Party) {
	if len(parties) == 0 {
		return
	}
	match := func(line string) int {
		l := strings.ToLower(strings.Trim(strings.TrimSpace(line), ":,."))
		l = strings.TrimPrefix(strings.TrimPrefix(l, "for and on behalf of "), "on behalf of ")
		for i, p := range parties {
			for _, n := range []string{p.Name, p.ShortName, p.Role} {
				n = strings.ToLower(strings.Trim(n, ":,. "))
				if n != "" && (l == n || strings.HasPrefix(l, n+":")) {
					return i
				}
			}
		}
		return -1
	}
	start := len(paras) * 2 / 3
	for i := start; i < len(paras); i++ {
		t := strings.Join(strings.Fields(paras[i].Text), " ")
		if m := signedByRE.FindStringSubmatch(t); m != nil {
			if k := match(m[2]); k >= 0 && parties[k].Signatory == "" {
				parties[k].Signatory = bound(m[1], result.MaxPartyFieldBytes)
			}
			continue
		}
		if strings.HasPrefix(strings.ToLower(t), "signed") || signedRoleRE.ReplaceAllString(t, "") == "" {
			for _, m := range signedRoleRE.FindAllStringSubmatch(t, -1) {
				if k := match(m[2]); k >= 0 && parties[k].Signatory == "" && match(m[1]) < 0 {
					parties[k].Signatory = bound(strings.TrimSpace(m[1]), result.MaxPartyFieldBytes)
				}
			}
			continue
		}
		k := match(t)
		if k < 0 || parties[k].Signatory != "" {
			continue
		}
		var by string
		for j := i + 1; j < len(paras) && j <= i+4; j++ {
			u := strings.TrimSpace(paras[j].Text)
			if match(u) >= 0 {
				break
			}
			if m := nameLineRE.FindStringSubmatch(u); m != nil && !strings.Contains(m[1], "_") {
				parties[k].Signatory = bound(m[1], result.MaxPartyFieldBytes)
				break
			}
			if m := byLineRE.FindStringSubmatch(u); m != nil && by == "" {
				by = m[1]
			}
		}
		if parties[k].Signatory == "" && by != "" {
			parties[k].Signatory = bound(by, result.MaxPartyFieldBytes)
		}
	}
}
