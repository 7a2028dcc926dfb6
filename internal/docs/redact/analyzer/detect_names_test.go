package analyzer

import "testing"

func TestDetectPersons(t *testing.T) {
	runDetect(t, []detectCase{
		{"first last", "Grace Kim chaired the meeting", "Grace Kim", Person},
		{"ambiguous first with surname", "then Mark Davis spoke", "Mark Davis", Person},
		{"will smith", "Will Smith thinks so", "Will Smith", Person},
		{"words as words", "I will mark the rose garden in April.", "will mark the rose garden in April", ""},
		{"grace period", "The grace period ends in May.", "grace period ends in May", ""},
		{"april month", "Sales rose in April Johnson said", "April", ""},
		{"amazing grace", "We sang Amazing Grace together", "Amazing Grace", ""},
		{"rose bowl", "The Rose Bowl is in January", "Rose Bowl", ""},
		{"will question", "Will the benches arrive?", "Will", ""},
		{"hope street", "planted Hope Street verges", "Hope Street", ""},
		{"title unknown surname", "ask Dr. Okonjo-Iweala today", "Okonjo-Iweala", Person},
		{"title ms", "Ms Lindqvist signed", "Lindqvist", Person},
		{"weak title needs list", "General Motors reported", "Motors", ""},
		{"last first", "Listed as Kim, Grace in the register", "Kim, Grace", Person},
		{"last first caps", "KIM, Grace", "KIM, Grace", Person},
		{"accented", "José García López called", "José García López", Person},
		{"nfd", "Jose\u0301 Garci\u0301a called", "Jose\u0301 Garci\u0301a", Person},
		{"cyrillic listed", "Иван Петров пришёл", "Иван Петров", Person},
		{"cyrillic label", "Имя: Всеволод Каблуков", "Всеволод Каблуков", Person},
		{"greek label", "Όνομα: Γιώργος Παπαδόπουλος", "Γιώργος Παπαδόπουλος", Person},
		{"cjk label", "姓名：王伟", "王伟", Person},
		{"cjk honorific", "请联系王伟先生。", "王伟", Person},
		{"name label rare", "Name: Ifeoluwa Quarshie", "Ifeoluwa Quarshie", Person},
		{"name label ambiguous", "First name: Will", "Will", Person},
		{"company name label", "Company Name: Acme Widgets", "Acme Widgets", ""},
		{"role label needs list", "From: Accounts Payable", "Accounts Payable", ""},
		{"role label listed", "Patient: Grace Kim", "Grace Kim", Person},
		{"dear", "Dear Siobhan,", "Siobhan", Person},
		{"dear sir", "Dear Sir or Madam,", "Sir", ""},
		{"lone first name", "Please send it to Priya by Friday.", "Priya", Person},
		{"wrapped cell", "Contact Robert\nKim for details", "Robert\nKim", Person},
		{"particle", "Ludwig van Beethoven wrote", "Ludwig van Beethoven", Person},
		{"org after first name", "Grace Street Bank", "Grace", ""},
	})
}

func TestDetectAddresses(t *testing.T) {
	runDetect(t, []detectCase{
		{"us full two lines", "1600 Pennsylvania Avenue NW, Apt 4B\nWashington, DC 20500", "1600 Pennsylvania Avenue NW, Apt 4B\nWashington, DC 20500", StreetAddress},
		{"us full one line", "at 12 Main St., Springfield, IL 62704-1234.", "12 Main St., Springfield, IL 62704-1234", StreetAddress},
		{"us street only", "meet at 455 Oak Lane tomorrow", "455 Oak Lane", StreetAddress},
		{"po box", "PO Box 1234, Springfield, IL 62704", "PO Box 1234, Springfield, IL 62704", StreetAddress},
		{"uk flat", "Flat 3, 12 High Street, London SW1A 2AA", "Flat 3, 12 High Street, London SW1A 2AA", StreetAddress},
		{"uk lines", "10 Downing Street\nLondon SW1A 2AA", "10 Downing Street\nLondon SW1A 2AA", StreetAddress},
		{"de", "Hauptstraße 5, 10115 Berlin", "Hauptstraße 5, 10115 Berlin", StreetAddress},
		{"de two words", "Berliner Straße 42\n60311 Frankfurt am Main", "Berliner Straße 42\n60311 Frankfurt am Main", StreetAddress},
		{"fr", "12 rue de la Paix, 75002 Paris", "12 rue de la Paix, 75002 Paris", StreetAddress},
		{"es", "Calle Mayor 10, 28013 Madrid", "Calle Mayor 10, 28013 Madrid", StreetAddress},
		{"it", "Via Roma 10, 00184 Roma", "Via Roma 10, 00184 Roma", StreetAddress},
		{"nl", "Keizersgracht 123, 1015 CJ Amsterdam", "Keizersgracht 123, 1015 CJ Amsterdam", StreetAddress},
		{"section number", "see Section 3 of the agreement", "Section 3", ""},
		{"suite alone", "room Suite 200 is free", "Suite 200", ""},
		{"year and place", "in 2019 the company moved", "2019 the company", ""},
	})
}
