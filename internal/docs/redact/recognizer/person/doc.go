// Package person is the registry's "person" kind: names of people, found
// by rules over the window's tokens and labels, in order of strength:
// after a name label ("Name:"), a role label ("Patient:"), an opener or
// closing ("Dear", "Mit freundlichen Grüßen") or a cue ("please
// contact", "letter from"); a chat line's speaker and the parties of an
// agreement in capitals; after a title ("Dr."); as "Last, First"; with
// the family name first ("Nguyễn Thị Mai", "Yamamoto Kenta"); as a
// listed first name and what follows it (particles included: "van der",
// "de los", "al-Hakim"); as an unlisted capitalised word before a listed
// surname; a given name before a verb of saying ("Mark said"); and CJK
// runs with an honorific. A name found once is then found wherever its
// words stand again in the window, ordinary words only where a name can
// stand ("Will will write", not "Will you"). Places and firms that read
// like names ("Lake Louise", "Philip Morris") are never people.
//
// Its data (recognizer/data) is the first-name and surname lists, the
// ordinary words that are also names, and name_lexicon.yaml: titles,
// particles, suffixes, family-first surnames, verbs of saying, places
// and organisations, and the words that end a name.
package person
