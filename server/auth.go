package server

import "github.com/memhost/memhost/server/auth"

// socketOnly serves a handler on the unix socket only (auth.SocketOnly).
var socketOnly = auth.SocketOnly
