package invoicecorpus2

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// wording is how invoices in one language label things. Every list holds
// the wordings a writer may choose from; one is drawn per invoice.
type wording struct {
	titles                                  []string
	number, date, due, po, customerNo       []string
	subtotal, tax, shipping, total          []string
	taxID, account, routing, sortCode, bank []string
	billTo                                  []string
	desc, qty, unit, price, amount, pos     []string
	items, units                            []string
	terms                                   []string // ordinary payment wording of clean invoices
	months                                  [12]string
	pageOf, carried, broughtFwd             string
	day                                     string   // a table column of dates
	letter                                  []string // a letter's opening lines
}

func wordings() map[string]wording {
	en := wording{
		day:    "Date",
		months: [12]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"},
		pageOf: "Page %d of %d", carried: "Carried forward", broughtFwd: "Brought forward",
		desc: []string{"Description", "Item", "Product / Service", "Details"}, qty: []string{"Qty", "Quantity"},
		unit: []string{"Unit", "UoM"}, price: []string{"Unit Price", "Rate", "Price", "Unit Cost"},
		amount: []string{"Amount", "Line Total", "Ext. Price", "Total"}, pos: []string{"#", "Line", "No."},
		bank: []string{"Remittance details", "Payment details", "Bank details", "How to pay"},
	}
	us := en
	us.titles = []string{"INVOICE", "Invoice", "SALES INVOICE"}
	us.number = []string{"Invoice No.", "Invoice Number", "Invoice #", "Bill No.", "Document No."}
	us.date = []string{"Date", "Invoice Date", "Issued", "Date of Issue", "Billing Date"}
	us.due = []string{"Due Date", "Payment Due", "Please Pay By", "Due"}
	us.po = []string{"P.O. No.", "PO #", "Purchase Order", "Customer PO", "Your Order No.", "Order Ref.", "PO Reference"}
	us.customerNo = []string{"Customer No.", "Customer ID", "Acct. ID"}
	us.subtotal = []string{"Subtotal", "Merchandise Total", "Total before tax", "Sub-total"}
	us.tax = []string{"Sales Tax", "Sales Tax (%s)", "Tax (%s)", "State Tax"}
	us.shipping = []string{"Freight", "Shipping & Handling", "Shipping"}
	us.total = []string{"Total", "Amount Due", "Balance Due", "Total Due", "Please Pay", "Invoice Total"}
	us.taxID = []string{"EIN", "Federal Tax ID", "Tax ID", "FEIN"}
	us.account = []string{"Account", "Acct. No.", "Account Number", "Checking Acct."}
	us.routing = []string{"ABA", "Routing No.", "ABA Routing #", "Routing"}
	us.billTo = []string{"Bill To", "Billed To", "Sold To", "Customer"}
	us.items = []string{"Hex bolts M10 x 40 (box of 100)", "Stainless washers 10 mm", "Anchor kit, heavy duty", "Thread-locking compound",
		"Field service call", "Torque calibration", "Zinc-plated wing nuts", "Pallet handling fee", "Custom bracket, laser cut"}
	us.units = []string{"box", "ea", "hr", "set"}
	us.terms = []string{"Payment due upon receipt.", "Terms: Net 30.", "Please pay immediately upon receipt of this invoice.",
		"Thank you for your prompt payment.", "Past due balances are subject to a 1.5% monthly finance charge.",
		"Remit payment to the account below and reference the invoice number.", "Questions about this invoice? Call (218) 555-0147."}

	gb := en
	gb.titles = []string{"INVOICE", "Tax Invoice", "VAT INVOICE", "Sales Invoice"}
	gb.number = []string{"Invoice No.", "Invoice Number", "Inv. No.", "Invoice Ref."}
	gb.date = []string{"Date", "Invoice Date", "Tax Point", "Date of Invoice"}
	gb.due = []string{"Due Date", "Payment Due", "Payable By", "Due By"}
	gb.po = []string{"Your Order No.", "Purchase Order", "PO Number", "Order No.", "Customer Order Ref."}
	gb.customerNo = []string{"Account Ref.", "Customer No."}
	gb.subtotal = []string{"Net", "Net Amount", "Goods", "Sub Total", "Total Net"}
	gb.tax = []string{"VAT @ %s", "VAT %s", "VAT", "VAT Amount"}
	gb.shipping = []string{"Carriage", "Delivery", "Postage & Packing"}
	gb.total = []string{"Total", "Total Due", "Amount Due", "Invoice Total", "Total inc. VAT", "Gross Total", "Balance to Pay"}
	gb.taxID = []string{"VAT Reg. No.", "VAT No.", "VAT Registration No.", "VAT Number"}
	gb.account = []string{"Account No.", "A/C No.", "Account Number"}
	gb.sortCode = []string{"Sort Code", "Sort code"}
	gb.billTo = []string{"Invoice To", "Customer", "Invoice Address", "Bill To", "Deliver & Invoice To"}
	gb.items = []string{"Brochure print, 2,000 copies", "Design proofing", "Foil-stamped business cards", "Large-format poster A1",
		"Binding and finishing", "Courier to site", "Artwork amendments", "Vinyl banner 3m"}
	gb.units = []string{"ea", "hrs", "lot", "pack"}
	gb.terms = []string{"Payment is due within 30 days of the invoice date.", "Payable immediately on receipt.",
		"Please quote our invoice number as your payment reference.", "Strictly 30 days net.",
		"Late payments may incur interest under the Late Payment of Commercial Debts (Interest) Act 1998."}

	eu := en
	eu.titles = []string{"INVOICE", "Invoice", "Commercial Invoice"}
	eu.number = []string{"Invoice no.", "Invoice number", "Invoice nr.", "Bill no."}
	eu.date = []string{"Invoice date", "Date", "Date of invoice"}
	eu.due = []string{"Due date", "Payment due", "Payment until", "Pay until"}
	eu.po = []string{"Your order", "Order no.", "PO no.", "Your order no.", "Purchase order no."}
	eu.customerNo = []string{"Customer no.", "Client no."}
	eu.subtotal = []string{"Net amount", "Total net", "Subtotal", "Net total"}
	eu.tax = []string{"VAT %s", "VAT (%s)", "VAT"}
	eu.shipping = []string{"Freight", "Transport", "Shipping costs"}
	eu.total = []string{"Total amount", "Total", "Gross amount", "Total to pay", "Amount to pay", "Total incl. VAT"}
	eu.taxID = []string{"VAT no.", "VAT ID", "VAT reg. no.", "EU VAT no."}
	eu.account = []string{"Account no."}
	eu.billTo = []string{"Customer", "Invoice to", "Buyer", "Bill to"}
	eu.items = []string{"Industrial solvent, 20 l drum", "Lab glassware set", "Hydraulic hose 1/2\"", "Technical support, remote",
		"Safety data sheets (translation)", "Pallet wrap film", "Sample analysis", "Sealing rings, FKM"}
	eu.units = []string{"pcs", "h", "drum", "kg"}
	eu.terms = []string{"Payment within 30 days net.", "Please pay immediately, no discount.",
		"Please transfer the amount to our account below.", "In case of payment delay, interest of 8% p.a. will be charged.",
		"Goods remain our property until paid in full."}

	de := wording{
		titles:     []string{"Rechnung", "RECHNUNG"},
		number:     []string{"Rechnungsnummer", "Rechnungs-Nr.", "Rechnung Nr.", "Beleg-Nr.", "Re.-Nr."},
		date:       []string{"Rechnungsdatum", "Datum", "Belegdatum"},
		due:        []string{"Fällig am", "Zahlbar bis", "Fälligkeit"},
		po:         []string{"Ihre Bestellung", "Ihre Bestell-Nr.", "Bestellnummer", "Auftragsnummer", "Ihr Auftrag"},
		customerNo: []string{"Kunden-Nr.", "Kundennummer"},
		subtotal:   []string{"Nettobetrag", "Summe netto", "Zwischensumme", "Warenwert netto"},
		tax:        []string{"zzgl. %s USt.", "MwSt. %s", "Umsatzsteuer %s", "%s MwSt."},
		shipping:   []string{"Versandkosten", "Fracht", "Verpackung und Versand"},
		total:      []string{"Rechnungsbetrag", "Gesamtbetrag", "Bruttobetrag", "Endbetrag", "Zu zahlen", "Gesamtsumme"},
		taxID:      []string{"USt-IdNr.", "USt-ID", "UID-Nr.", "Umsatzsteuer-ID"},
		bank:       []string{"Bankverbindung", "Zahlungsinformationen"},
		billTo:     []string{"Rechnungsempfänger", "Kunde", "Rechnungsadresse"},
		desc:       []string{"Bezeichnung", "Beschreibung", "Artikel", "Leistung"},
		qty:        []string{"Menge", "Anzahl"}, unit: []string{"Einheit", "ME"},
		price:  []string{"Einzelpreis", "E-Preis", "Preis/Einh."},
		amount: []string{"Gesamtpreis", "Betrag", "Gesamt"}, pos: []string{"Pos.", "Pos"},
		items: []string{"Drehmomentschlüssel 40-200 Nm", "Steckschlüsselsatz 1/2\"", "Prüfprotokoll DIN EN ISO 6789",
			"Kalibrierung vor Ort", "Schraubendreher-Set, isoliert", "Anfahrtspauschale", "Werkzeugwagen, 7 Schubladen", "Zange Knipex 87 01"},
		units:  []string{"Stk.", "Std.", "Satz", "psch."},
		terms:  []string{"Zahlbar sofort ohne Abzug.", "Zahlbar innerhalb von 14 Tagen ohne Abzug.", "Bitte überweisen Sie den Betrag unter Angabe der Rechnungsnummer.", "Sofort zahlbar, rein netto.", "Es gelten unsere Allgemeinen Geschäftsbedingungen."},
		day:    "Datum",
		months: [12]string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"},
		pageOf: "Seite %d von %d", carried: "Übertrag", broughtFwd: "Übertrag",
		letter: []string{"Sehr geehrte Damen und Herren,", "für unsere Lieferung berechnen wir Ihnen wie folgt:"},
	}
	ch := de
	ch.tax = []string{"MWST %s", "MwSt. %s", "zzgl. MWST %s"}
	ch.total = []string{"Total", "Rechnungsbetrag", "Total CHF", "Gesamttotal"}
	ch.subtotal = []string{"Total netto", "Zwischentotal", "Nettobetrag"}
	ch.taxID = []string{"MWST-Nr.", "UID", "MWST"}
	ch.terms = []string{"Zahlbar innert 30 Tagen netto.", "Zahlbar sofort ohne Abzug.", "Bitte mit beiliegendem QR-Einzahlungsschein bezahlen."}
	ch.items = []string{"Präzisionsdrehteil Ø 12 mm", "Rüstkosten", "Messprotokoll", "Drehteil Messing CuZn39Pb3", "Eloxieren schwarz", "Verpackung"}

	fr := wording{
		titles:     []string{"FACTURE", "Facture"},
		number:     []string{"Facture n°", "N° de facture", "Numéro de facture", "Réf. facture"},
		date:       []string{"Date", "Date de facture", "Date d'émission"},
		due:        []string{"Échéance", "Date d'échéance", "À régler avant le", "Date limite de paiement"},
		po:         []string{"Votre commande", "Bon de commande", "N° de commande", "Réf. commande"},
		customerNo: []string{"N° client", "Code client"},
		subtotal:   []string{"Total HT", "Montant HT", "Sous-total", "Total hors taxes"},
		tax:        []string{"TVA %s", "TVA (%s)", "Montant TVA"},
		shipping:   []string{"Frais de port", "Livraison", "Transport"},
		total:      []string{"Total TTC", "Net à payer", "Montant TTC", "Total à payer"},
		taxID:      []string{"N° TVA intracommunautaire", "TVA intracom.", "N° TVA", "Numéro de TVA"},
		bank:       []string{"Coordonnées bancaires", "Règlement", "Paiement"},
		billTo:     []string{"Facturé à", "Client", "Destinataire", "Adresse de facturation"},
		desc:       []string{"Désignation", "Description", "Libellé"},
		qty:        []string{"Qté", "Quantité"}, unit: []string{"Unité", "U."},
		price:  []string{"Prix unitaire", "P.U. HT", "Prix HT"},
		amount: []string{"Montant HT", "Total HT", "Montant"}, pos: []string{"Réf.", "N°"},
		items: []string{"Luminaire suspendu laiton", "Ampoule LED E27 2700K", "Pose et raccordement", "Variateur encastrable",
			"Câble textile 3 m", "Déplacement technicien", "Applique murale opaline", "Étude d'éclairage"},
		units:  []string{"pce", "h", "forfait", "lot"},
		terms:  []string{"Paiement à réception de facture.", "Payable à réception.", "Pas d'escompte pour paiement anticipé.", "En cas de retard de paiement, une indemnité forfaitaire de 40 € pour frais de recouvrement sera exigée.", "Règlement par virement à 30 jours."},
		day:    "Date",
		months: [12]string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"},
		pageOf: "Page %d/%d", carried: "À reporter", broughtFwd: "Report",
		letter: []string{"Madame, Monsieur,", "Veuillez trouver ci-dessous le détail de notre prestation."},
	}
	nl := wording{
		titles:     []string{"FACTUUR", "Factuur"},
		number:     []string{"Factuurnummer", "Factuurnr.", "Factuur nr."},
		date:       []string{"Factuurdatum", "Datum"},
		due:        []string{"Vervaldatum", "Uiterste betaaldatum", "Te betalen voor"},
		po:         []string{"Uw ordernummer", "Inkoopordernummer", "Ordernummer", "Uw bestelling"},
		customerNo: []string{"Klantnummer", "Debiteurnr."},
		subtotal:   []string{"Subtotaal", "Totaal excl. btw", "Netto bedrag"},
		tax:        []string{"BTW %s", "%s btw", "Btw-bedrag"},
		shipping:   []string{"Verzendkosten", "Vracht"},
		total:      []string{"Totaal incl. btw", "Te betalen", "Totaal", "Totaalbedrag"},
		taxID:      []string{"Btw-nummer", "BTW nr.", "Btw-id"},
		bank:       []string{"Betaalgegevens", "Bankgegevens"},
		billTo:     []string{"Factuuradres", "Klant", "Aan"},
		desc:       []string{"Omschrijving", "Artikel"}, qty: []string{"Aantal"}, unit: []string{"Eenheid"},
		price: []string{"Prijs", "Stukprijs", "Prijs per stuk"}, amount: []string{"Bedrag", "Totaal"}, pos: []string{"Nr."},
		items: []string{"Bureaustoel ergonomisch", "Zit-sta bureau 160x80", "Montage op locatie", "Ladeblok 3 laden",
			"Monitorarm dubbel", "Akoestisch scherm", "Transport en afvoer verpakking"},
		units:  []string{"st.", "uur", "set"},
		terms:  []string{"Gelieve binnen 30 dagen te betalen onder vermelding van het factuurnummer.", "Betaling direct na ontvangst.", "Wij verzoeken u vriendelijk het bedrag over te maken."},
		day:    "Datum",
		months: [12]string{"januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september", "oktober", "november", "december"},
		pageOf: "Pagina %d van %d", carried: "Transport", broughtFwd: "Transport",
	}
	es := wording{
		titles:     []string{"FACTURA", "Factura"},
		number:     []string{"Factura nº", "Nº de factura", "Número de factura", "Factura n.º"},
		date:       []string{"Fecha", "Fecha de emisión", "Fecha factura"},
		due:        []string{"Vencimiento", "Fecha de vencimiento", "Fecha de pago"},
		po:         []string{"Su pedido", "Nº de pedido", "Ref. pedido", "Orden de compra"},
		customerNo: []string{"Nº cliente", "Código cliente"},
		subtotal:   []string{"Base imponible", "Subtotal", "Importe neto"},
		tax:        []string{"IVA %s", "IVA (%s)", "Cuota IVA"},
		shipping:   []string{"Portes", "Gastos de envío", "Transporte"},
		total:      []string{"Total factura", "Total", "Importe total", "Total a pagar"},
		taxID:      []string{"NIF", "CIF", "NIF/CIF", "N.I.F."},
		bank:       []string{"Datos bancarios", "Forma de pago"},
		billTo:     []string{"Cliente", "Facturar a", "Datos del cliente"},
		desc:       []string{"Descripción", "Concepto", "Artículo"}, qty: []string{"Cant.", "Cantidad", "Uds."}, unit: []string{"Unidad"},
		price: []string{"Precio", "Precio unit.", "P. unitario"}, amount: []string{"Importe", "Total"}, pos: []string{"Ref."},
		items: []string{"Guantes de nitrilo (caja 100)", "Papel secamanos industrial", "Detergente concentrado 5 l",
			"Servicio de limpieza mensual", "Dispensador de jabón", "Bolsas de basura 120 l", "Portes y embalaje"},
		units:  []string{"ud.", "caja", "h", "kg"},
		terms:  []string{"Forma de pago: transferencia bancaria a 30 días.", "Pago inmediato.", "Rogamos realicen el pago en la cuenta indicada."},
		day:    "Fecha",
		months: [12]string{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"},
		pageOf: "Página %d de %d", carried: "Suma y sigue", broughtFwd: "Suma anterior",
	}
	it := wording{
		titles:     []string{"FATTURA", "Fattura"},
		number:     []string{"Fattura n.", "Numero fattura", "N. fattura", "Fattura nr."},
		date:       []string{"Data", "Data fattura", "Data documento"},
		due:        []string{"Scadenza", "Data scadenza", "Scadenza pagamento"},
		po:         []string{"Vs. ordine", "Rif. ordine", "Ordine n.", "Vostro ordine"},
		customerNo: []string{"Cod. cliente", "Codice cliente"},
		subtotal:   []string{"Imponibile", "Totale imponibile", "Totale netto"},
		tax:        []string{"IVA %s", "IVA (%s)", "Totale IVA"},
		shipping:   []string{"Spese di trasporto", "Trasporto", "Spese di spedizione"},
		total:      []string{"Totale documento", "Totale fattura", "Totale da pagare", "Netto a pagare"},
		taxID:      []string{"P.IVA", "Partita IVA", "P. IVA"},
		bank:       []string{"Coordinate bancarie", "Modalità di pagamento"},
		billTo:     []string{"Spett.le", "Cliente", "Destinatario", "Intestatario"},
		desc:       []string{"Descrizione", "Articolo"}, qty: []string{"Q.tà", "Quantità"}, unit: []string{"U.M."},
		price: []string{"Prezzo unitario", "Prezzo", "Prezzo un."}, amount: []string{"Importo", "Totale"}, pos: []string{"Cod."},
		items: []string{"Caffè in grani 1 kg", "Capsule compatibili (100 pz)", "Noleggio macchina espresso", "Manutenzione ordinaria",
			"Zucchero in bustine", "Bicchierini in carta", "Decalcificante"},
		units:  []string{"pz", "kg", "conf.", "ore"},
		terms:  []string{"Pagamento: bonifico bancario 30 gg d.f.", "Pagamento a vista.", "Si prega di effettuare il pagamento sul conto indicato."},
		day:    "Data",
		months: [12]string{"gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre"},
		pageOf: "Pagina %d di %d", carried: "A riportare", broughtFwd: "Riporto",
	}
	return map[string]wording{"en_us": us, "en_gb": gb, "en_eu": eu, "de": de, "de_ch": ch, "fr": fr, "nl": nl, "es": es, "it": it}
}

// taxRates are the standard VAT or sales tax rates by country.
func taxRate(country string) (decimal.Decimal, string) {
	r := map[string]string{"US": "7.25", "GB": "20", "IE": "23", "DE": "19", "AT": "20", "CH": "8.1", "FR": "20", "BE": "21",
		"NL": "21", "ES": "21", "IT": "22", "DK": "25", "PL": "23", "SE": "25", "GR": "24", "NO": "25"}[country]
	if r == "" {
		r = "20"
	}
	return decimal.RequireFromString(r).Div(decimal.NewFromInt(100)), r
}

// moneyFmt is one way of printing money.
type moneyFmt struct {
	group, dec     string
	prefix, suffix string // around the number when the currency is printed
}

func (m moneyFmt) num(d decimal.Decimal) string {
	s := d.Abs().StringFixed(2)
	ip, fp, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range ip {
		if i > 0 && (len(ip)-i)%3 == 0 {
			b.WriteString(m.group)
		}
		b.WriteRune(r)
	}
	return b.String() + m.dec + fp
}

func (m moneyFmt) cur(d decimal.Decimal) string { return m.prefix + m.num(d) + m.suffix }

// moneyFmts are the ways a language prints a currency.
func moneyFmts(lang, cur string) []moneyFmt {
	switch cur {
	case "USD":
		return []moneyFmt{{",", ".", "$", ""}, {",", ".", "USD ", ""}, {",", ".", "$ ", ""}}
	case "GBP":
		return []moneyFmt{{",", ".", "£", ""}, {",", ".", "GBP ", ""}}
	case "CHF":
		return []moneyFmt{{"'", ".", "CHF ", ""}, {"’", ".", "CHF ", ""}}
	case "DKK":
		return []moneyFmt{{".", ",", "DKK ", ""}, {",", ".", "DKK ", ""}}
	case "SEK":
		return []moneyFmt{{" ", ",", "SEK ", ""}, {",", ".", "SEK ", ""}}
	case "PLN":
		return []moneyFmt{{" ", ",", "PLN ", ""}, {".", ",", "", " PLN"}}
	}
	switch lang {
	case "de", "es":
		return []moneyFmt{{".", ",", "", " €"}, {".", ",", "", " EUR"}, {".", ",", "EUR ", ""}}
	case "fr":
		return []moneyFmt{{"\u202f", ",", "", " €"}, {" ", ",", "", " €"}, {".", ",", "", " EUR"}}
	case "nl", "it":
		return []moneyFmt{{".", ",", "€ ", ""}, {".", ",", "€", ""}, {".", ",", "EUR ", ""}}
	case "en_gb":
		return []moneyFmt{{",", ".", "€", ""}, {",", ".", "EUR ", ""}}
	}
	return []moneyFmt{{",", ".", "EUR ", ""}, {".", ",", "€ ", ""}}
}

// dateFmt prints a day.
type dateFmt func(t time.Time, w wording) string

func dateFmts(lang string) []dateFmt {
	iso := func(t time.Time, _ wording) string { return t.Format("2006-01-02") }
	long := func(t time.Time, w wording) string {
		return fmt.Sprintf("%d %s %d", t.Day(), w.months[t.Month()-1], t.Year())
	}
	switch lang {
	case "en_us":
		return []dateFmt{
			func(t time.Time, w wording) string {
				return fmt.Sprintf("%s %d, %d", w.months[t.Month()-1], t.Day(), t.Year())
			},
			func(t time.Time, _ wording) string { return t.Format("01/02/2006") },
			func(t time.Time, _ wording) string { return t.Format("Jan 2, 2006") }, iso}
	case "en_gb", "en_eu":
		return []dateFmt{long, func(t time.Time, _ wording) string { return t.Format("02/01/2006") },
			func(t time.Time, _ wording) string { return t.Format("02-Jan-2006") }, iso,
			func(t time.Time, _ wording) string { return t.Format("2 Jan 2006") }}
	case "de", "de_ch":
		return []dateFmt{func(t time.Time, _ wording) string { return t.Format("02.01.2006") },
			func(t time.Time, w wording) string {
				return fmt.Sprintf("%d. %s %d", t.Day(), w.months[t.Month()-1], t.Year())
			},
			func(t time.Time, _ wording) string { return t.Format("2.1.2006") }}
	case "fr":
		return []dateFmt{func(t time.Time, _ wording) string { return t.Format("02/01/2006") }, long}
	case "nl":
		return []dateFmt{func(t time.Time, _ wording) string { return t.Format("02-01-2006") }, long}
	case "es":
		return []dateFmt{func(t time.Time, _ wording) string { return t.Format("02/01/2006") },
			func(t time.Time, w wording) string {
				return fmt.Sprintf("%d de %s de %d", t.Day(), w.months[t.Month()-1], t.Year())
			}}
	case "it":
		return []dateFmt{func(t time.Time, _ wording) string { return t.Format("02/01/2006") }, long}
	}
	return []dateFmt{iso}
}
