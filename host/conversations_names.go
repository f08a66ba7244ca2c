package host

import "github.com/memhost/memhost"

// Names from package conversations, until its types move to the root package
// with the others.

var (
	CheckHookEvent = memhost.CheckHookEvent
	HookEvents     = memhost.HookEvents
)

const (
	HookSessionStart = memhost.HookSessionStart
	HookPreCompact   = memhost.HookPreCompact
	HookSessionEnd   = memhost.HookSessionEnd
	HookStop         = memhost.HookStop
)
