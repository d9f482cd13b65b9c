package main

import "github.com/durabox/durabox/host/client"

var terminateCommand = requestCommand("terminate", "end an instance now, without its cooperation",
	"End the instance ID at its next turn: its code runs no more, and its history\n"+
		"records the termination, with the reason. Its children still running are\n"+
		"terminated with it (instances it started detached live on); its activities not\n"+
		"yet started and its timers are dropped. Cancel, which the orchestration sees\n"+
		"and may clean up after, is gentler.",
	"termination", (*client.Client).Terminate)
