// Package hidden decides which words of a page's text layer a reader of
// the rendered page cannot see: boxes off the page, glyphs too small to
// read, and text that draws no (or no readable) ink because it is white,
// near-white, in an invisible render mode or under an opaque image.
//
// Geometry needs only the word boxes. Ink needs two renders of the page at
// the same resolution, one normal and one with text filtered out
// (ghostscript -dFILTERTEXT): a word is visible only if the pixels inside
// its box differ between the two. The comparison is pure Go (Classify) so
// it is tested without ghostscript; RenderPages is the small runner that
// produces the two renders inside the guest, under a timeout that kills
// gs's whole process group.
//
// It never decides what hidden text means (package inject does) and never
// returns hidden text itself: callers get a verdict per box.
package hidden
