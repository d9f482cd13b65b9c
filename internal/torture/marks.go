package torture

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// The host's log tells two things about activities: the tally module's Mark
// prints a line each time it runs, which the host logs as it is printed
// (so a kill right after still leaves it in the log), and the host notes
// each activity it delivers again.

// markLine is the host's record of what Mark prints, or a worker's
// (crashworker) line of its own Mark.
var markLine = regexp.MustCompile(`(?:guest|worker): mark (\S+) delivery (\d+)`)

// hostLog is what the run's log says about activities.
type hostLog struct {
	// marks lists, per Mark key, the delivery number of each run.
	marks map[string][]int
	// redelivered counts the activities the host delivered more than
	// once, by instance and schedule id.
	redelivered int
}

// readHostLog reads the log of every host of the run.
func readHostLog(path string) (*hostLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l := &hostLog{marks: map[string][]int{}}
	again := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := markLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			l.marks[m[1]] = append(l.marks[m[1]], n)
			continue
		}
		if !strings.Contains(line, "activity delivered again") {
			continue
		}
		var key []string
		for _, field := range strings.Fields(line) {
			if strings.HasPrefix(field, "instance=") || strings.HasPrefix(field, "scheduleId=") {
				key = append(key, field)
			}
		}
		again[strings.Join(key, " ")] = true
	}
	l.redelivered = len(again)
	return l, sc.Err()
}
