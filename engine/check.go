package engine

import "github.com/durabox/durabox/abi"

// checkCommand refuses a command whose names or texts break the ABI's
// rules (abi.CheckName, abi.CheckText): a name that is empty, too long,
// not UTF-8 or holds a control character; a custom status or a failure
// that is not UTF-8. History, JSON and metrics hold them exactly, so a
// command that carried other bytes would be recorded as something else
// than what the guest emitted, and its replay would not match. Refused
// where it enters, it fails the instance the same way live and on every
// replay.
func checkCommand(c *abi.Command) error {
	switch c.Kind {
	case abi.CommandScheduleActivity:
		if err := abi.CheckName("activity name", c.Name); err != nil {
			return err
		}
		if c.TaskQueue != "" {
			if err := abi.CheckTaskQueue(c.TaskQueue); err != nil {
				return err
			}
		}
		if c.Retry != nil {
			return abi.CheckRetryPolicy(c.Retry)
		}
	case abi.CommandWaitEvent, abi.CommandWaitEventPersistent:
		return abi.CheckName("event name", c.Name)
	case abi.CommandPatch:
		return abi.CheckName("change id", c.Name)
	case abi.CommandRaise:
		if err := abi.CheckName("event name", c.Name); err != nil {
			return err
		}
		return abi.CheckName("instance id the event is raised at", c.InstanceID)
	case abi.CommandStartChild:
		if err := abi.CheckName("child's orchestration name", c.Name); err != nil || c.InstanceID == "" {
			return err
		}
		return abi.CheckName("child's instance id", c.InstanceID)
	case abi.CommandSetCustomStatus:
		return abi.CheckText("custom status", c.Name)
	case abi.CommandSetAttributes:
		_, err := abi.DecodeAttributes(c.Input)
		return err
	case abi.CommandCompleteUpdate, abi.CommandRejectUpdate:
		if err := abi.CheckName("update id", c.UpdateID); err != nil {
			return err
		}
		if c.Failure != nil {
			return abi.CheckFailure(c.Failure)
		}
	case abi.CommandFail:
		if c.Failure != nil {
			return abi.CheckFailure(c.Failure)
		}
	}
	return nil
}
