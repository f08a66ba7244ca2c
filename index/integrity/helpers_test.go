package integrity

import "github.com/memhost/memhost/index/indextest"

var (
	open  = indextest.Open
	page  = indextest.Page
	paths = indextest.Paths
)
