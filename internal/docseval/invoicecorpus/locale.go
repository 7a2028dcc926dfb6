package invoicecorpus

import "github.com/shopspring/decimal"

// words are a locale's printed labels.
type words struct {
	title, number, date, due, po, billTo                  string
	desc, qty, unit, price, amount                        string
	subtotal, tax, shipping, total                        string
	payment, iban, bic, account, routing, sortCode, taxID string
	thanks, pageOf, cont                                  string
}

// locale is everything country-specific about an invoice.
type locale struct {
	name     string
	currency string
	amounts  []amountStyle
	dates    []dateStyle
	w        words
	taxRate  decimal.Decimal
	units    []string
	items    []string
}

func locales() map[string]locale {
	return map[string]locale{
		"us": {name: "us", currency: "USD", amounts: []amountStyle{styleUS, styleUS, styleUSCode},
			dates: []dateStyle{dateUSLong, dateUSSlash, dateISO}, taxRate: decimal.RequireFromString("0.0825"),
			units: []string{"ea", "hrs", "pcs"},
			items: []string{"Steel brackets", "Consulting services", "Cable assembly", "Packing materials",
				"Maintenance visit", "Replacement filters", "Software license", "Safety gloves (box)"},
			w: words{title: "INVOICE", number: "Invoice #:", date: "Invoice Date:", due: "Due Date:", po: "PO Number:",
				billTo: "Bill To:", desc: "Description", qty: "Qty", unit: "Unit", price: "Unit Price", amount: "Amount",
				subtotal: "Subtotal", tax: "Sales Tax (8.25%)", shipping: "Shipping", total: "Total Due",
				payment: "Payment details", iban: "IBAN:", bic: "SWIFT:", account: "Account Number:", routing: "Routing Number:",
				sortCode: "Sort Code:", taxID: "EIN:", thanks: "Thank you for your business.", pageOf: "Page %d of %d", cont: "continued"}},
		"uk": {name: "uk", currency: "GBP", amounts: []amountStyle{styleUK},
			dates: []dateStyle{dateUKLong, dateUKSlash, dateISO}, taxRate: decimal.RequireFromString("0.20"),
			units: []string{"ea", "hrs", "m"},
			items: []string{"Cat6 patch cable", "Installation labour", "Cable trunking", "Site survey",
				"Fibre splice kit", "Wall plates", "Testing and certification", "Cable ties (bag)"},
			w: words{title: "INVOICE", number: "Invoice No:", date: "Invoice Date:", due: "Due Date:", po: "PO Number:",
				billTo: "Invoice To:", desc: "Description", qty: "Qty", unit: "Unit", price: "Unit Price", amount: "Amount",
				subtotal: "Subtotal", tax: "VAT 20%", shipping: "Delivery", total: "Total",
				payment: "Bank details", iban: "IBAN:", bic: "BIC:", account: "Account No:", routing: "",
				sortCode: "Sort Code:", taxID: "VAT Reg No:", thanks: "Payment within 30 days please.", pageOf: "Page %d of %d", cont: "continued"}},
		"de": {name: "de", currency: "EUR", amounts: []amountStyle{styleDE},
			dates: []dateStyle{dateDEDots}, taxRate: decimal.RequireFromString("0.19"),
			units: []string{"Stk", "Std", "m"},
			items: []string{"Hydraulikpumpe", "Montagearbeiten", "Dichtungssatz", "Wartung Anlage",
				"Edelstahlrohr", "Steuerungsmodul", "Schrauben M8 (Pack)", "Inbetriebnahme"},
			w: words{title: "RECHNUNG", number: "Rechnungsnummer:", date: "Rechnungsdatum:", due: "Fälligkeitsdatum:",
				po: "Bestellnummer:", billTo: "Rechnungsempfänger:", desc: "Beschreibung", qty: "Menge", unit: "Einheit",
				price: "Einzelpreis", amount: "Betrag", subtotal: "Zwischensumme", tax: "MwSt. 19 %", shipping: "Versandkosten",
				total: "Gesamtbetrag", payment: "Bankverbindung", iban: "IBAN:", bic: "BIC:", account: "", routing: "",
				sortCode: "", taxID: "USt-IdNr.:", thanks: "Vielen Dank für Ihren Auftrag.", pageOf: "Seite %d von %d", cont: "Fortsetzung"}},
		"fr": {name: "fr", currency: "EUR", amounts: []amountStyle{styleFRNBSP, styleFRThin},
			dates: []dateStyle{dateFRSlash, dateFRLong}, taxRate: decimal.RequireFromString("0.20"),
			units: []string{"u", "h", "j"},
			items: []string{"Audit organisationnel", "Atelier de formation", "Frais de déplacement", "Rapport final",
				"Accompagnement projet", "Licence annuelle", "Support technique", "Étude de marché"},
			w: words{title: "FACTURE", number: "N° de facture :", date: "Date de facture :", due: "Date d'échéance :",
				po: "Bon de commande :", billTo: "Facturé à :", desc: "Désignation", qty: "Qté", unit: "Unité",
				price: "Prix unitaire", amount: "Montant", subtotal: "Total HT", tax: "TVA 20 %", shipping: "Frais de port",
				total: "Total TTC", payment: "Coordonnées bancaires", iban: "IBAN :", bic: "BIC :", account: "", routing: "",
				sortCode: "", taxID: "TVA intracommunautaire :", thanks: "Merci de votre confiance.", pageOf: "Page %d sur %d", cont: "suite"}},
		"nl": {name: "nl", currency: "EUR", amounts: []amountStyle{styleNL},
			dates: []dateStyle{dateNLDash}, taxRate: decimal.RequireFromString("0.21"),
			units: []string{"st", "uur", "pallet"},
			items: []string{"Transport Rotterdam-Venlo", "Opslag per pallet", "Laden en lossen", "Douaneafhandeling",
				"Verpakkingsmateriaal", "Wachttijd chauffeur", "Koeltransport", "Administratiekosten"},
			w: words{title: "FACTUUR", number: "Factuurnummer:", date: "Factuurdatum:", due: "Vervaldatum:",
				po: "Inkoopordernummer:", billTo: "Factuuradres:", desc: "Omschrijving", qty: "Aantal", unit: "Eenheid",
				price: "Prijs", amount: "Bedrag", subtotal: "Subtotaal", tax: "BTW 21%", shipping: "Verzendkosten",
				total: "Totaal", payment: "Betaalgegevens", iban: "IBAN:", bic: "BIC:", account: "", routing: "",
				sortCode: "", taxID: "BTW-nummer:", thanks: "Graag betaling binnen 30 dagen.", pageOf: "Pagina %d van %d", cont: "vervolg"}},
	}
}

// localeFor maps a vendor country to its locale.
func localeFor(country string) string {
	switch country {
	case "GB":
		return "uk"
	case "DE":
		return "de"
	case "FR":
		return "fr"
	case "NL":
		return "nl"
	}
	return "us"
}
