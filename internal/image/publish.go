package image

// Publish renames a finished temporary file or directory into its cache
// path, keeping an entry another builder published first (both were built
// from the same inputs). It is the exported form of the cache's
// publish-by-rename, for packages that build their own cache entries.
func Publish(tmp, final string) error { return publish(tmp, final) }
