package engine

import (
	"fmt"
	"strconv"

	"github.com/durabox/durabox/abi"
)

// childID derives the instance id of a child its orchestration gave none:
// PARENT~EXECUTION:EVENT, the parent's id, the number of the parent's
// execution that started it, and its schedule event ("order-7~1:2").
//
// Such ids never collide. Not with each other: the last '~' ends the
// parent's id, and what follows it holds the two numbers in decimal, so an
// id names one parent, execution and event. Event numbers restart in every
// execution, and the execution number does not: it grows with every
// continue-as-new and every reset, so a child started at the same event of
// another execution, or by a step a reset runs again, gets another id. Not
// with an id a user or an orchestration chooses (abi.CheckInstanceID), which
// never holds '~'. Nor with the ids engines before this one derived,
// PARENT:EVENT, which hold no '~' either. A derived id may be longer than
// the abi.MaxInstanceID a chosen id may be: it is never cut short, which
// could make two the same.
func childID(parent string, execution, event int64) string {
	return parent + "~" + strconv.FormatInt(execution, 10) + ":" + strconv.FormatInt(event, 10)
}

// checkChosenID refuses a StartChild command whose instance id the
// orchestration chose, when it is not one a user could choose: it could
// take an id the engine derives for another child. Only new commands are
// checked; history keeps the ids it records.
func checkChosenID(c *abi.Command) error {
	if c.Kind != abi.CommandStartChild || c.InstanceID == "" {
		return nil
	}
	if err := abi.CheckInstanceID(c.InstanceID); err != nil {
		return fmt.Errorf("engine: the orchestration started child orchestration %q as instance %q, which is not an id an orchestration may choose: %w", c.Name, c.InstanceID, err)
	}
	return nil
}
