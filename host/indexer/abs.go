package indexer

// AbsPath is where an index path lives on disk: transcripts in the
// sessions folder, pages in the notebook.
func (x *Indexer) AbsPath(rel string) string { return x.absPath(rel) }
