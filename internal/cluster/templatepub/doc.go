// Package templatepub is the publishing side of templates across a
// cluster (`airlock template publish`): Publish uploads a bake's memory
// file, device state and root image to a blob store
// (internal/cluster/blobs; a blob already there is not sent again), and
// only then, in one transaction, inserts the build into PostgreSQL, makes
// it its template's current build and notifies the API tier: no row names
// a blob before the blob is complete. Offer is a build as the tier offers
// it to the nodes of its host class, whose template syncers
// (internal/cluster/templatesync) pull it.
//
// It reaches PostgreSQL, so nodes never import it.
package templatepub
