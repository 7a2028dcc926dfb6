package invoicecorpus2

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// TenantID is the tenant the corpus bills.
const TenantID = "lyle-partners"

// vendor is one supplier of the tenant, as its invoices print it.
type vendor struct {
	id      string
	name    string   // as the letterhead prints it
	legal   string   // the name in the master (may differ from the print)
	aliases []string // further names in the master
	country string
	lang    string // the language its invoices are written in
	cur     string
	taxID   string // as printed on its invoices
	address []string
	// bank as printed: an IBAN (with BIC), or a US account and routing
	// number, or a UK sort code and account (and an IBAN).
	iban, bic, account, routing, sortCode string
	textOnly                              bool // its name needs a script the OCR models do not read
	terms                                 int
}

// masterTaxID is how the master keeps a printed tax id: the master of this
// tenant stores VAT numbers with their country prefix and without spaces.
func (v vendor) masterTaxID() string {
	t := strings.ToUpper(strings.NewReplacer(" ", "", ".", "").Replace(v.taxID))
	switch v.country {
	case "IT":
		if !strings.HasPrefix(t, "IT") {
			t = "IT" + t
		}
	}
	return t
}

// tuneVendors are the vendors of SplitTune, heldOutVendors those of
// SplitHeldOut: no vendor, name or address is in both.
func tuneVendors() []vendor {
	return []vendor{
		{id: "sup-0101", name: "Crestline Fastener Co.", legal: "Crestline Fastener Company", aliases: []string{"Crestline Fasteners"},
			country: "US", lang: "en_us", cur: "USD", taxID: "84-2231907",
			address: []string{"7710 Quarry Road", "Duluth, MN 55811"},
			account: "6100482275", routing: aba("09100001"), terms: 30},
		{id: "sup-0102", name: "Hollins & Pryce Ltd", legal: "Hollins & Pryce Limited",
			country: "GB", lang: "en_gb", cur: "GBP", taxID: "GB 274 1180 36",
			address:  []string{"Unit 4, Calder Works", "Wakefield WF1 5PJ"},
			sortCode: "40-22-17", account: "61538840", bic: "MIDLGB22", terms: 30},
		{id: "sup-0103", name: "Müller-Lüdenscheidt Werkzeug GmbH & Co. KG", legal: "Müller-Lüdenscheidt Werkzeug GmbH & Co. KG",
			aliases: []string{"Müller-Lüdenscheidt Werkzeug"},
			country: "DE", lang: "de", cur: "EUR", taxID: "DE 281 447 019",
			address: []string{"Kölner Straße 118", "58509 Lüdenscheid"},
			iban:    iban("DE", "445500100029381174"), bic: "SOLADES1LDS", terms: 14},
		{id: "sup-0104", name: "Société Lumière d'Azur SAS", legal: "Lumière d'Azur",
			country: "FR", lang: "fr", cur: "EUR", taxID: "FR 47 512336781",
			address: []string{"14, avenue Jean Médecin", "06000 Nice"},
			iban:    iban("FR", "30004008190001023417642"), bic: "BNPAFRPPNIC", terms: 30},
		{id: "sup-0105", name: "Van der Berg Kantoorinrichting B.V.", legal: "Van der Berg Kantoorinrichting B.V.",
			country: "NL", lang: "nl", cur: "EUR", taxID: "NL824133507B01",
			address: []string{"Vaartweg 61", "3812 AB Amersfoort"},
			iban:    iban("NL", "RABO0317645208"), bic: "RABONL2U", terms: 30},
		{id: "sup-0106", name: "Pérez Ibáñez Suministros S.L.", legal: "Perez Ibanez Suministros SL",
			country: "ES", lang: "es", cur: "EUR", taxID: "ESB84512396",
			address: []string{"Calle de Alcalá 221", "28028 Madrid"},
			iban:    iban("ES", "21000418450200051332"), bic: "CAIXESBBXXX", terms: 30},
		{id: "sup-0107", name: "Ørsted Værktøj ApS", legal: "Ørsted Værktøj ApS", aliases: []string{"Orsted Vaerktoej"},
			country: "DK", lang: "en_eu", cur: "DKK", taxID: "DK29481736",
			address: []string{"Industrivej 9", "8600 Silkeborg"},
			iban:    iban("DK", "30003512778342"), bic: "DABADKKK", terms: 30},
		{id: "sup-0108", name: "Brunner Präzision AG", legal: "Brunner Präzision AG",
			country: "CH", lang: "de_ch", cur: "CHF", taxID: "CHE-114.927.538 MWST",
			address: []string{"Werkstrasse 31", "8400 Winterthur"},
			iban:    iban("CH", "00700110004216587"), bic: "ZKBKCHZZ80A", terms: 30},
	}
}

func heldOutVendors() []vendor {
	return []vendor{
		{id: "sup-0201", name: "Sawtooth Ridge Outfitters, Inc.", legal: "Sawtooth Ridge Outfitters Inc",
			country: "US", lang: "en_us", cur: "USD", taxID: "27-5519034",
			address: []string{"415 N Main St, Suite 200", "Ketchum, ID 83340"},
			account: "20017733140", routing: aba("12400004"), terms: 30},
		{id: "sup-0202", name: "Ó Briain Print & Design Ltd", legal: "O Briain Print and Design Limited",
			country: "IE", lang: "en_gb", cur: "EUR", taxID: "IE 6388047V",
			address: []string{"22 Mary Street", "Galway H91 YX2E"},
			iban:    iban("IE", "AIBK93115212345678"), bic: "AIBKIE2D", terms: 30},
		{id: "sup-0203", name: "Gruber & Söhne Elektrotechnik GmbH", legal: "Gruber & Söhne Elektrotechnik GmbH",
			country: "AT", lang: "de", cur: "EUR", taxID: "ATU58229147",
			address: []string{"Linzer Straße 77", "4600 Wels"},
			iban:    iban("AT", "2011182715830400"), bic: "GIBAATWWXXX", terms: 30},
		{id: "sup-0204", name: "Dubois Frères SRL", legal: "Dubois Freres",
			country: "BE", lang: "fr", cur: "EUR", taxID: "BE 0471.332.915",
			address: []string{"Rue de la Station 12", "5000 Namur"},
			iban:    iban("BE", "068899912345"), bic: "GKCCBEBB", terms: 30},
		{id: "sup-0205", name: "Caffè Nerino S.r.l.", legal: "Caffe Nerino Srl",
			country: "IT", lang: "it", cur: "EUR", taxID: "04821930967",
			address: []string{"Via Lorenteggio 257", "20152 Milano MI"},
			iban:    iban("IT", "X0542811101000000123456"), bic: "BCITITMM", terms: 30},
		{id: "sup-0206", name: "Łukasiewicz Chemia sp. z o.o.", legal: "Łukasiewicz Chemia sp. z o.o.", aliases: []string{"Lukasiewicz Chemia"},
			country: "PL", lang: "en_eu", cur: "PLN", taxID: "PL5272638812",
			address: []string{"ul. Łódzka 45", "90-001 Łódź"},
			iban:    iban("PL", "109010140000000003012345"), bic: "WBKPPLPP", terms: 30},
		{id: "sup-0207", name: "Åkesson & Söner AB", legal: "Åkesson & Söner Aktiebolag",
			country: "SE", lang: "en_eu", cur: "SEK", taxID: "SE556677889901",
			address: []string{"Hamngatan 4", "411 14 Göteborg"},
			iban:    iban("SE", "50000000058398257466"), bic: "ESSESESS", terms: 30},
		{id: "sup-0208", name: "Θεσσαλική Εμπορική Α.Ε.", legal: "Θεσσαλική Εμπορική Α.Ε.", aliases: []string{"Thessaliki Emporiki SA"},
			country: "GR", lang: "en_eu", cur: "EUR", taxID: "EL094259216",
			address: []string{"Odos Egnatias 88", "546 30 Thessaloniki"},
			iban:    iban("GR", "01101250000000012300695"), bic: "ETHNGRAA", textOnly: true, terms: 30},
	}
}

// unknownNames are suppliers the master does not have, by split.
func unknownNames(s Split) []vendor {
	if s == SplitHeldOut {
		return []vendor{
			{name: "Pinecone Analytics Inc.", country: "US", lang: "en_us", cur: "USD", address: []string{"88 Spruce Ave", "Bend, OR 97701"}},
			{name: "Verde Limpio S.A.", country: "ES", lang: "es", cur: "EUR", address: []string{"Avda. de la Constitución 7", "41004 Sevilla"}},
			{name: "Nordvik Maskin AS", country: "NO", lang: "en_eu", cur: "EUR", address: []string{"Strandgata 19", "5013 Bergen"}},
		}
	}
	return []vendor{
		{name: "Kestrel Bay Trading LLC", country: "US", lang: "en_us", cur: "USD", address: []string{"12 Wharf Lane", "Mystic, CT 06355"}},
		{name: "Fischer Antriebstechnik GmbH", country: "DE", lang: "de", cur: "EUR", address: []string{"Am Hafen 3", "28217 Bremen"}},
		{name: "Atelier Moreau SARL", country: "FR", lang: "fr", cur: "EUR", address: []string{"8 rue des Tanneurs", "69002 Lyon"}},
	}
}

// iban computes an IBAN's check digits for a country and BBAN.
func iban(cc, bban string) string {
	var b strings.Builder
	for _, c := range strings.ToUpper(bban) + cc + "00" {
		if c >= 'A' && c <= 'Z' {
			fmt.Fprintf(&b, "%d", c-'A'+10)
		} else {
			b.WriteRune(c)
		}
	}
	n, _ := new(big.Int).SetString(b.String(), 10)
	return fmt.Sprintf("%s%02d%s", cc, 98-new(big.Int).Mod(n, big.NewInt(97)).Int64(), strings.ToUpper(bban))
}

// aba appends the ABA check digit to eight digits.
func aba(first8 string) string {
	w := []int{3, 7, 1, 3, 7, 1, 3, 7}
	sum := 0
	for i, c := range first8 {
		sum += w[i] * int(c-'0')
	}
	return first8 + fmt.Sprint((10-sum%10)%10)
}

// masterJSON is the tenant's vendor master as an ERP exports it: a
// tenant_name, addresses as lists of lines, and fields of its own
// (exported_at, erp_ref, contact) that invoicecheck does not use.
func masterJSON() []byte {
	type bank struct {
		IBAN          string `json:"iban,omitempty"`
		BIC           string `json:"bic,omitempty"`
		AccountNumber string `json:"account_number,omitempty"`
		RoutingNumber string `json:"routing_number,omitempty"`
		SortCode      string `json:"sort_code,omitempty"`
	}
	type rec struct {
		VendorID string   `json:"vendor_id"`
		ERPRef   string   `json:"erp_ref"`
		Name     string   `json:"name"`
		Aliases  []string `json:"aliases,omitempty"`
		TaxID    string   `json:"tax_id"`
		Country  string   `json:"country"`
		Currency string   `json:"currency"`
		Address  []string `json:"address"`
		Contact  string   `json:"contact"`
		Bank     bank     `json:"bank"`
		Terms    int      `json:"payment_terms_days"`
	}
	var vs []rec
	for _, v := range append(tuneVendors(), heldOutVendors()...) {
		vs = append(vs, rec{VendorID: v.id, ERPRef: "K" + strings.TrimPrefix(v.id, "sup-"), Name: v.legal,
			Aliases: v.aliases, TaxID: v.masterTaxID(), Country: v.country,
			Currency: v.cur, Address: v.address, Contact: "accounts receivable",
			Bank:  bank{IBAN: v.iban, BIC: v.bic, AccountNumber: v.account, RoutingNumber: v.routing, SortCode: v.sortCode},
			Terms: v.terms})
	}
	out, err := json.MarshalIndent(struct {
		TenantID   string `json:"tenant_id"`
		TenantName string `json:"tenant_name"`
		ExportedAt string `json:"exported_at"`
		Vendors    []rec  `json:"vendors"`
	}{TenantID, "Haverford & Lyle Partners LLP", "2026-03-01T06:00:00Z", vs}, "", "  ")
	if err != nil {
		panic(err) // static data
	}
	return append(out, '\n')
}
