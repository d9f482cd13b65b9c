package main

import "github.com/durabox/durabox/host/client"

var cancelCommand = requestCommand("cancel", "cancel an instance",
	"Request the cancellation of the instance ID. The orchestration sees it: what it\n"+
		"waits on is cancelled (children too), and it may clean up before it ends.",
	"cancellation", (*client.Client).Cancel)
