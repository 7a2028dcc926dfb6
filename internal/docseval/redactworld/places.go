package redactworld

import (
	"fmt"
	"strings"
)

// Countries whose addresses the corpus writes, and their phone regions.
var countries = []string{"JP", "DE", "FR", "NL", "GB", "CA", "AU", "US"}

// Address parts by country. Streets and towns are split between Dev and
// Test like names (gen.pick).
var (
	jpPlaces = [][4]string{ // ward, city, romanised district, postcode
		{"Shibuya-ku", "Tokyo", "Jingumae", "150-0001"}, {"Minato-ku", "Tokyo", "Roppongi", "106-0032"},
		{"Chiyoda-ku", "Tokyo", "Marunouchi", "100-0005"}, {"Kita-ku", "Osaka", "Umeda", "530-0001"},
		{"Naka-ku", "Yokohama", "Yamashitacho", "231-0023"}, {"Higashiyama-ku", "Kyoto", "Gionmachi", "605-0073"},
		{"Chuo-ku", "Sapporo", "Odori Nishi", "060-0042"}, {"Hakata-ku", "Fukuoka", "Hakata Ekimae", "812-0011"},
		{"Sumida-ku", "Tokyo", "Oshiage", "131-0045"}, {"Nakamura-ku", "Nagoya", "Meieki", "450-0002"}}
	jpNative = []string{"東京都渋谷区神宮前", "東京都港区六本木", "東京都千代田区丸の内", "大阪府大阪市北区梅田",
		"神奈川県横浜市中区山下町", "京都府京都市東山区祇園町", "北海道札幌市中央区大通西", "福岡県福岡市博多区博多駅前"}
	jpBuildings = []string{"Mori Tower 40F", "Sun Heights 302", "Grand Maison 1105", "Villa Aoyama 201"}
	deStreets   = []string{"Unter den Linden", "Am Sandtorkai", "Königsallee", "Leopoldstraße", "Hauptstr.",
		"Bahnhofstraße", "Schillerplatz", "An der Alster", "Im Tal", "Kurfürstendamm", "Rosenweg",
		"Lindenallee", "Zeil", "Hohe Straße", "Am Markt", "Friedrichstraße"}
	deTowns = []string{"10117 Berlin", "20457 Hamburg", "80802 München", "50667 Köln", "60311 Frankfurt am Main",
		"40212 Düsseldorf", "04109 Leipzig", "69117 Heidelberg", "79098 Freiburg im Breisgau", "28195 Bremen"}
	frStreets = []string{"rue de Rivoli", "avenue Jean Jaurès", "rue des Lilas", "boulevard Victor Hugo",
		"place de la République", "rue Pasteur", "rue du Faubourg Saint-Antoine", "chemin des Vignes",
		"allée des Tilleuls", "quai de la Tournelle", "impasse des Acacias", "cours Mirabeau"}
	frTowns = []string{"75004 Paris", "69002 Lyon", "31000 Toulouse", "13001 Marseille", "33000 Bordeaux",
		"59000 Lille", "44000 Nantes", "13100 Aix-en-Provence", "67000 Strasbourg", "35000 Rennes"}
	nlStreets = []string{"Prinsengracht", "Damrak", "Coolsingel", "Lange Voorhout", "Oudegracht", "Herengracht",
		"Kalverstraat", "Stationsplein", "Dorpsstraat", "Kerkstraat", "Vondelstraat", "Rokin", "Grote Markt", "Spui"}
	nlTowns = []string{"1016 GV Amsterdam", "1012 LG Amsterdam", "3011 AD Rotterdam", "2514 EE Den Haag",
		"3512 JE Utrecht", "9711 LV Groningen", "5611 AZ Eindhoven", "2311 EZ Leiden", "2011 HJ Haarlem"}
	ukStreets = []string{"Wellington Road", "Church Lane", "Baker Street", "Royal Crescent", "Mill Close",
		"Station Road", "Victoria Mews", "Kingsley Gardens", "Orchard Way", "High Street", "Albert Terrace",
		"Priory Walk"}
	ukTowns = []string{"London|NW1 6XE", "Manchester|M14 6EP", "Bath|BA1 2LR", "Norwich|NR2 1TZ", "Leeds|LS6 2AB",
		"Bristol|BS8 1QU", "Edinburgh|EH3 9DR", "Cardiff|CF10 3AT", "York|YO1 7HH", "Oxford|OX2 6HT"}
	caStreets = []string{"Granville Street", "Queens Quay West", "Yonge St", "Jasper Avenue", "Spring Garden Road",
		"Portage Ave", "Bank Street", "Maple Crescent", "Elgin Street", "Douglas Street"}
	caTowns = []string{"Vancouver, BC V6C 1T1", "Toronto, ON M5J 0B8", "Toronto, ON M4W 3L4", "Edmonton, AB T5J 0N3",
		"Halifax, NS B3J 1G9", "Winnipeg, MB R3C 4T3", "Ottawa, ON K1P 5J2", "Calgary, AB T2P 2M5",
		"Victoria, BC V8W 1N9", "Hamilton, ON L8P 4R5"}
	caQuebec = []string{"rue Sherbrooke Ouest|Montréal (Québec) H3A 1H6", "boulevard René-Lévesque|Québec (Québec) G1R 2B5",
		"avenue du Parc|Montréal (Québec) H2V 4E7", "rue Saint-Jean|Québec (Québec) G1R 1P8"}
	auStreets = []string{"Smith Street", "Collins St", "Ocean Parade", "Brunswick St", "Jetty Road",
		"Elizabeth Street", "Lonsdale Crescent", "King Street", "Beach Road", "Glebe Point Rd"}
	auTowns = []string{"Surry Hills NSW 2010", "Melbourne VIC 3000", "Cottesloe WA 6011", "Fortitude Valley QLD 4006",
		"Glenelg SA 5045", "Hobart TAS 7000", "Braddon ACT 2612", "Darwin NT 0800", "Newtown NSW 2042", "Fitzroy VIC 3065"}
	usStreets = []string{"N. Kedzie Ave", "Elm Street", "Magnolia Blvd", "W 34th St", "Peachtree Rd NE",
		"Lakeshore Drive", "Cedar Lane", "Maple Court", "S. Congress Ave", "Pine Street"}
	usTowns = []string{"Chicago, IL 60625", "Springfield, MA 01103", "Burbank, CA 91505", "New York, NY 10001",
		"Atlanta, GA 30305", "Madison, WI 53703", "Portland, OR 97205", "Austin, TX 78704", "Denver, CO 80206"}
)

// address returns a postal address of country as its lines.
func (g *gen) address(country string) []string {
	no := fmt.Sprint(g.n(1, 240))
	switch country {
	case "JP":
		return g.jpAddress()
	case "DE":
		return []string{g.pick(deStreets) + " " + no + g.any([]string{"", "", "a", "b"}), g.pick(deTowns)}
	case "FR":
		return []string{no + g.any([]string{"", "", " bis", " ter"}) + g.any([]string{" ", ", "}) + g.pick(frStreets), g.pick(frTowns)}
	case "NL":
		return []string{g.pick(nlStreets) + " " + no + g.any([]string{"", "", "-II", "A"}), g.pick(nlTowns)}
	case "GB":
		return g.ukAddress(no)
	case "CA":
		return g.caAddress(no)
	case "AU":
		return g.auAddress(no)
	}
	town := g.pick(usTowns)
	return []string{no + " " + g.pick(usStreets) + g.any([]string{"", ", Apt 2R", " #4", ", Unit 12"}), town}
}

func (g *gen) jpAddress() []string {
	p := jpPlaces[g.pickIndex(len(jpPlaces))]
	block := fmt.Sprintf("%d-%d-%d", g.n(1, 6), g.n(1, 30), g.n(1, 20))
	switch g.variant(3) {
	case 0:
		return []string{block + " " + p[2] + ", " + p[0], p[1] + " " + p[3]}
	case 1:
		lines := []string{g.pick(jpBuildings) + ", " + block + " " + p[2], p[0] + ", " + p[1] + " " + p[3]}
		return lines
	}
	return []string{p[1] + "-to " + p[0] + " " + p[2] + " " + block, p[3]}
}

// jpNativeAddress is a Japanese address in Japanese, postcode mark first.
func (g *gen) jpNativeAddress() string {
	return fmt.Sprintf("〒%03d-%04d %s%d-%d-%d", g.n(100, 999), g.n(1, 9999), g.pick(jpNative), g.n(1, 6), g.n(1, 30), g.n(1, 20))
}

func (g *gen) ukAddress(no string) []string {
	town, pc, _ := strings.Cut(g.pick(ukTowns), "|")
	switch g.variant(3) {
	case 0:
		return []string{no + " " + g.pick(ukStreets), town, pc}
	case 1:
		return []string{"Flat " + fmt.Sprint(g.n(1, 12)) + g.any([]string{"", "B"}) + ", " + no + " " + g.pick(ukStreets), town + " " + pc}
	}
	return []string{g.any([]string{"Rose Cottage", "The Old Rectory", "Ivy House"}), g.pick(ukStreets), town, pc}
}

func (g *gen) caAddress(no string) []string {
	if g.chance(0.3) {
		street, town, _ := strings.Cut(g.any(caQuebec), "|")
		return []string{no + ", " + street, town}
	}
	unit := g.any([]string{"", "", ", Suite 2500", ", Unit 7"})
	return []string{no + " " + g.pick(caStreets) + unit, g.pick(caTowns)}
}

func (g *gen) auAddress(no string) []string {
	switch g.variant(3) {
	case 0:
		return []string{no + " " + g.pick(auStreets), g.pick(auTowns)}
	case 1:
		return []string{"Unit " + fmt.Sprint(g.n(1, 20)) + ", " + no + " " + g.pick(auStreets), g.pick(auTowns)}
	}
	return []string{fmt.Sprint(g.n(1, 20)) + "/" + no + " " + g.pick(auStreets), g.pick(auTowns)}
}

// Near misses: places that are also names, and organisations named
// after people. None is personal data.
var (
	placeNames = []string{"the County of San Francisco", "San Francisco", "Santa Clara County", "St. Louis",
		"Port Elizabeth", "Victoria Station", "Florence, Italy", "Charlotte, North Carolina", "Jackson, Mississippi",
		"Austin, Texas", "Virginia Beach", "Lake Louise", "Mount Pleasant", "Prince Edward Island", "Alexandria",
		"Adelaide", "Hamilton", "Wellington", "Cape Town", "São Paulo", "Rio de Janeiro", "Den Haag",
		"Saint-Étienne", "Frankfurt am Main", "Stratford-upon-Avon", "San José", "Los Angeles", "Santa Monica",
		"Georgetown", "Port Louis", "Marseille", "Salt Lake City"}
	orgNames = []string{"Morgan Stanley", "Wells Fargo", "Johnson & Johnson", "Ernst & Young", "Marks & Spencer",
		"Philip Morris", "Thomson Reuters", "Ralph Lauren", "Estée Lauder", "Hugo Boss", "Louis Vuitton",
		"Goldman Sachs", "Dow Jones", "Procter & Gamble", "Rolls-Royce", "Mercedes-Benz"}
)
