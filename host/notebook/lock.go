package notebook

import "context"

// Lock takes the notebook's lock (the one page writes hold: an in-process
// semaphore and a flock, so other processes too) until the returned function
// is called. Federation holds it while a merge updates the pages.
func (n *Notebook) Lock(ctx context.Context) (func(), error) { return n.lock(ctx) }
