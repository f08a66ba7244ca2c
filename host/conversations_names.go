package host

import "github.com/memhost/memhost/host/conversations"

// Names from package conversations, until its types move to the root package
// with the others.
type (
	SessionAppendRequest  = conversations.SessionAppendRequest
	SessionAppendResponse = conversations.SessionAppendResponse
	SessionsRequest       = conversations.SessionsRequest
	SessionsResponse      = conversations.SessionsResponse
	IngestRequest         = conversations.IngestRequest
	IngestResponse        = conversations.IngestResponse
	SessionTokensRequest  = conversations.SessionTokensRequest
	SessionCheckRequest   = conversations.SessionCheckRequest
	SessionCompactRequest = conversations.SessionCompactRequest
	HookRequest           = conversations.HookRequest
	HookResponse          = conversations.HookResponse
)

var (
	CheckHookEvent = conversations.CheckHookEvent
	HookEvents     = conversations.HookEvents
)

const (
	HookSessionStart = conversations.HookSessionStart
	HookPreCompact   = conversations.HookPreCompact
	HookSessionEnd   = conversations.HookSessionEnd
	HookStop         = conversations.HookStop
)
