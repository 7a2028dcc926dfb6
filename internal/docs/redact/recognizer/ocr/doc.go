// Package ocr holds what the redactor does only on pages read by OCR,
// where digits come back as look-alike letters ("5O4-22-2846",
// "Q@52229800") and a checksum or structure check that would confirm a
// number fails on a number plainly printed. Digits reads the text with
// look-alikes in digit-dominated words taken as the digits they resemble
// (the analyzer runs every recognizer on that reading too), and two
// registry kinds run on OCR pages only: "ocr_label", which takes the
// value right after a label ("Routing number:", "SSN") as that label's
// type by its shape alone, checks or no checks, and "ocr_email", which
// finds e-mail addresses whose "@" OCR misread.
package ocr
