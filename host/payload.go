package host

import (
	"fmt"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/ijson"
	"github.com/durabox/durabox/host/internal/size"
)

// checkPayload refuses a payload larger than limit, saying what it was.
func checkPayload(what string, data []byte, limit int) error {
	if len(data) > limit {
		return fmt.Errorf("%w: %s is %s, over %s", api.ErrTooLarge, what, size.MiB(len(data)), size.PayloadLimit(limit))
	}
	return nil
}

// checkCommands refuses commands that carry a payload larger than limit:
// an orchestration that emits one fails, saying which command and what
// it carried.
func checkCommands(cmds []abi.Command, limit int) error {
	for i := range cmds {
		c := &cmds[i]
		n := max(len(c.Input), len(c.Output), len(c.Name), len(c.InstanceID))
		if c.Failure != nil {
			n = max(n, len(c.Failure.Message)+len(c.Failure.Details))
		}
		if n > limit {
			return fmt.Errorf("its command %d, %s, carries %s, over %s", i+1, commandNames[c.Kind], size.MiB(n), size.PayloadLimit(limit))
		}
	}
	return nil
}

// checkCommandJSON refuses commands whose JSON payload (an input, a
// result) is not I-JSON (checkJSON): an orchestration that emits one
// fails, saying which command and what is wrong, the same way live and on
// every replay. An empty payload means null.
func checkCommandJSON(cmds []abi.Command) error {
	for i := range cmds {
		c := &cmds[i]
		what, data := "", c.Input
		switch c.Kind {
		case abi.CommandScheduleActivity:
			what = "the activity input"
		case abi.CommandStartChild:
			what = "the child's input"
		case abi.CommandRaise:
			what = "the raised event's data"
		case abi.CommandComplete:
			what, data = "the result", c.Output
		case abi.CommandContinueAsNew:
			what, data = "the input of the next execution", c.Output
		default:
			continue
		}
		if len(data) == 0 {
			continue
		}
		if err := ijson.Check(what, data); err != nil {
			return fmt.Errorf("its command %d is refused: %w", c.Seq, err)
		}
	}
	return nil
}

// commandNames names the commands that carry a payload, as an author
// calls them in the SDK.
var commandNames = map[abi.CommandKind]string{
	abi.CommandScheduleActivity:    "an activity's input",
	abi.CommandComplete:            "the orchestration's result",
	abi.CommandFail:                "the orchestration's failure",
	abi.CommandContinueAsNew:       "the input of continue-as-new",
	abi.CommandStartChild:          "a child's input",
	abi.CommandSetCustomStatus:     "a custom status",
	abi.CommandWaitEvent:           "an event's name",
	abi.CommandWaitEventPersistent: "an event's name",
	abi.CommandPatch:               "a patch's change id",
	abi.CommandRaise:               "a raised event's data",
}
