package analyzer

import (
	"strings"
	"testing"
)

// Phone numbers as their countries write them: with the trunk "(0)"
// after the country code, and in national form grouped the country's
// way, which needs no label.
func TestDetectInternationalPhones(t *testing.T) {
	runDetect(t, []detectCase{
		{"uk trunk", "Tel +44 (0)20 7946 0958 ext", "+44 (0)20 7946 0958", Phone},
		{"jp trunk", "call +81 (0)3-1234-5678 now", "+81 (0)3-1234-5678", Phone},
		{"fr national", "joindre au 06 12 34 56 78 ou", "06 12 34 56 78", Phone},
		{"fr dots", "au 01.42.68.53.00 demain", "01.42.68.53.00", Phone},
		{"au mobile", "T: 0412 345 678 | M", "0412 345 678", Phone},
		{"jp national", "電話 03-1234-5678", "03-1234-5678", Phone},
		{"nl area apart", "bel 020-5567100 vandaag", "020-5567100", Phone},
		{"de mobile", "unter 01512 3456789.", "01512 3456789", Phone},
		{"zeros", "Invoice 0000 000 000 paid", "0000 000 000", ""},
		{"national order number", "Order no. 06 12 34 56 78", "06 12 34 56 78", ""},
	})
}

// Dates of birth in the forms people write them.
func TestDetectBirthDateForms(t *testing.T) {
	runDetect(t, []detectCase{
		{"dashed month", "Date of birth: 03-Jan-1980", "03-Jan-1980", DateOfBirth},
		{"short year", "DOB 14 Feb 87", "14 Feb 87", DateOfBirth},
		{"weekday", "born on Sat, 14 February 1987 in", "Sat, 14 February 1987", DateOfBirth},
		{"ordinal of", "born on the 14th of February 1987", "14th of February 1987", DateOfBirth},
		{"dutch", "geboren 7 maart 1964", "7 maart 1964", DateOfBirth},
		{"japanese", "生年月日: 1979年9月15日", "1979年9月15日", DateOfBirth},
		{"b dot", "Ms Kim (b. 12 May 1960) said", "12 May 1960", DateOfBirth},
		{"b dot numeric", "patient (b. 03/04/1971) presented", "03/04/1971", DateOfBirth},
		{"invoice dashed", "Invoice date: 03-Jan-2020", "03-Jan-2020", ""},
		{"schedule b", "Schedule B 12 May 2024", "12 May 2024", ""},
	})
}

// Postal addresses of Canada, Australia, the Netherlands, Germany, the
// UK and Japan as written there.
func TestDetectWorldAddresses(t *testing.T) {
	runDetect(t, []detectCase{
		{"ca", "at 455 Granville Street, Vancouver, BC V6C 1T1 today", "455 Granville Street, Vancouver, BC V6C 1T1", StreetAddress},
		{"ca wrapped", "455 Granville Street, Vancouver,\nBC V6C 1T1.", "455 Granville Street, Vancouver,\nBC V6C 1T1", StreetAddress},
		{"quebec", "1200, rue Sherbrooke Ouest, Montréal (Québec) H3A 1H6", "1200, rue Sherbrooke Ouest, Montréal (Québec) H3A 1H6", StreetAddress},
		{"au unit", "write to Unit 5, 42 Smith Street, Surry Hills NSW 2010?", "Unit 5, 42 Smith Street, Surry Hills NSW 2010", StreetAddress},
		{"au slash", "12/42 Ocean Parade, Cottesloe WA 6011", "12/42 Ocean Parade, Cottesloe WA 6011", StreetAddress},
		{"au po box", "PO Box 2141, Fortitude Valley QLD 4006", "PO Box 2141, Fortitude Valley QLD 4006", StreetAddress},
		{"nl no suffix", "Damrak 1, 1012 LG Amsterdam", "Damrak 1, 1012 LG Amsterdam", StreetAddress},
		{"nl roman", "Oudegracht 100-II\n3511 AB Utrecht", "Oudegracht 100-II\n3511 AB Utrecht", StreetAddress},
		{"de no suffix", "Unter den Linden 77, 10117 Berlin", "Unter den Linden 77, 10117 Berlin", StreetAddress},
		{"de one word", "Zeil 31\n60311 Frankfurt am Main", "Zeil 31\n60311 Frankfurt am Main", StreetAddress},
		{"uk house name", "Rose Cottage, Church Lane, Norwich NR2 1TZ", "Rose Cottage, Church Lane, Norwich NR2 1TZ", StreetAddress},
		{"jp latin", "2-21-1 Shibuya, Shibuya-ku, Tokyo 150-0002", "2-21-1 Shibuya, Shibuya-ku, Tokyo 150-0002", StreetAddress},
		{"jp building", "Mori Tower 40F, 6-10-1 Roppongi, Minato-ku, Tokyo 106-6140", "Mori Tower 40F, 6-10-1 Roppongi, Minato-ku, Tokyo 106-6140", StreetAddress},
		{"jp order", "Tokyo-to Minato-ku Roppongi 6-10-1", "Tokyo-to Minato-ku Roppongi 6-10-1", StreetAddress},
		{"jp native", "住所: 〒150-0002 東京都渋谷区渋谷2-21-1", "〒150-0002 東京都渋谷区渋谷2-21-1", StreetAddress},
		{"jp native no postcode", "東京都港区六本木6丁目10番1号", "東京都港区六本木6丁目10番1号", StreetAddress},
		{"version and town", "Release 2.4, 2019 Berlin edition", "2019 Berlin", ""},
		{"chapter", "Chapter 12\n2019 Review", "Chapter 12\n2019 Review", ""},
	})
}

// Given names that are also words, where the context says they are
// names, and the same words used as words.
func TestDetectWordNamesInContext(t *testing.T) {
	runDetect(t, []detectCase{
		{"said", "Mark said the lift is broken.", "Mark", Person},
		{"as confirmed", "As Faith confirmed, the deposit is late.", "Faith", Person},
		{"emailed", "Ivy emailed the form on Monday.", "Ivy", Person},
		{"particle after", "Follow-up with Rich zu Lynar next week.", "Rich zu Lynar", Person},
		{"surname shape", "present: Sky O'Sullivan and others", "Sky O'Sullivan", Person},
		{"imperative", "Mark the date in your diary.", "Mark", ""},
		{"modal", "Will you sign by Friday?", "Will", ""},
		{"verb hope", "We hope to see you there.", "hope", ""},
		{"good faith", "We acted in good faith throughout.", "faith", ""},
		{"street possessive", "We planted Hope Street's verges.", "Hope Street's", ""},
	})
}

// Names with particles, family names first, and names in capitals.
func TestDetectParticlesAndOrders(t *testing.T) {
	runDetect(t, []detectCase{
		{"van der", "Pieter van der Berg signed", "Pieter van der Berg", Person},
		{"de los", "Maria de los Santos called", "Maria de los Santos", Person},
		{"hyphen particle", "Letter from Makena al-Hakim to the council", "Makena al-Hakim", Person},
		{"hyphen particle last first", "See the note by al-Hakim, Makena (2022).", "al-Hakim, Makena", Person},
		{"bin last first", "See the note by bin Rashid, Tanvir (2022).", "bin Rashid, Tanvir", Person},
		{"bin", "held in the name of Sione bin Rashid.", "Sione bin Rashid", Person},
		{"vietnamese", "signed for by Nguyễn Thị Mai today", "Nguyễn Thị Mai", Person},
		{"vietnamese last first", "Nguyễn, Thị Mai\t655 99 7688", "Nguyễn, Thị Mai", Person},
		{"japanese order", "Present: Yamamoto Kenta (Chair)", "Yamamoto Kenta", Person},
		{"given first vietnamese", "I spoke to Quốc Bảo Phạm yesterday", "Quốc Bảo Phạm", Person},
		{"caps particle", "(2) ZDENEK OKONKWO and EIRIK ZU LYNAR of", "EIRIK ZU LYNAR", Person},
		{"caps word name", "(2) SKY SØNDERGAARD and", "SKY SØNDERGAARD", Person},
		{"park avenue", "She lives on Park Avenue now.", "Park Avenue", ""},
	})
}

// A name found once is found again where it stands alone; an ordinary
// word found as a name is taken again only where a name can stand. The
// case is the last occurrence of want.
func TestDetectSameNameAgain(t *testing.T) {
	a, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []detectCase{
		{"given name again", "Patient name: DRAFENBRENBREN, Tapelbren\nHistory: Tapelbren was seen by Dr Okafor.", "Tapelbren", Person},
		{"chat speaker", "[09:42] Will de Vries: yes\n[09:45] Will: ok", "Will", Person},
		{"thanks", "[09:42] Will de Vries: yes\n[09:50] Ama: thanks Will :)", "Will", Person},
		{"subject", "Hope Mwangi chairs.\nHope has agreed to write.", "Hope", Person},
		{"modal again", "Will de Vries signed.\nWill you sign too?", "Will", ""},
		{"title phrase", "Grace Kim chaired. We sang Amazing Grace after.", "Grace", ""},
		{"month again", "May Chen signed the lease in May.", "May", ""},
	} {
		i := strings.LastIndex(c.text, c.want)
		lo, hi := len([]rune(c.text[:i])), len([]rune(c.text[:i+len(c.want)]))
		got := Type("")
		for _, f := range a.Analyze(c.text) {
			if f.Start <= lo && f.End >= hi {
				got = Type(f.Type)
			}
		}
		if got != c.typ {
			t.Errorf("%s: last %q found as %q, want %q", c.name, c.want, got, c.typ)
		}
	}
}

// Places and organisations that read like names stay.
func TestDetectPlacesAndFirms(t *testing.T) {
	runDetect(t, []detectCase{
		{"county", "the County of San Francisco approved it", "San Francisco", ""},
		{"lake", "Residents of Lake Louise hope so", "Lake Louise", ""},
		{"city state", "a grant from Charlotte, North Carolina arrived", "Charlotte", ""},
		{"station", "meet at Victoria Station at noon", "Victoria Station", ""},
		{"firm", "The landlord, Philip Morris, disputed it", "Philip Morris", ""},
		{"ampersand", "audited by Ernst & Young last year", "Ernst", ""},
		{"wrapped cells", "Victoria\nHamilton", "Victoria\nHamilton", ""},
		{"person named like a city", "Charlotte Brown signed", "Charlotte Brown", Person},
	})
}
