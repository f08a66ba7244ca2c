module github.com/memhost/memhost

go 1.26.0

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/urfave/cli/v3 v3.14.0
	gopkg.in/yaml.v3 v3.0.1
)

require golang.org/x/sys v0.13.0 // indirect
