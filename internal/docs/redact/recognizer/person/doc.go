// Package person is the registry's "person" kind: names of people, found
// by rules over the window's tokens and labels, in order of strength:
// after a name label ("Name:"), a role label ("Patient:"), an opener
// ("Dear") or a cue ("please contact"); after a title ("Dr."); as "Last,
// First"; as a listed first name and what follows it; as an unlisted
// capitalised word before a listed surname; and CJK runs with an
// honorific. Its data (recognizer/data) is the first-name and surname
// lists, the ordinary words that are also names, and name_lexicon.yaml:
// titles, particles, suffixes and the words that end a name.
package person
