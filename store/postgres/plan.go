package postgres

// plannerSettings are the settings each connection asks of the server's
// planner. Bitmap scans are off: a queue table (messages, activity_tasks)
// filled and drained within the minute before autovacuum first analyzes
// it has no statistics, and the planner, taking the rows a statement
// wants for a handful, read them with a bitmap scan and a sort. A bitmap
// scan reads every entry its condition matches, the deleted rows' that
// vacuum has not yet removed among them, and neither stops at a LIMIT
// nor marks those entries dead for the next scan, so each lease or read
// of an instance's messages read all that the backlog had left behind
// (TestBacklogCostsPerItem: 688 rows an activity at 10,000, against 62
// at 1,000). Without them, the store's statements walk an index in its
// order, stop at their LIMIT and mark the dead entries they pass, whatever
// the statistics say (TestQueuePlansWalkIndexes). The store's other
// statements look rows up by key; the filters of lists, which a bitmap
// scan could serve, are planned alike either way (TestFilterUsesIndexes).
// See RATIONALE.md, "Why does the PostgreSQL store plan without bitmap
// scans?".
var plannerSettings = map[string]string{
	"enable_bitmapscan": "off",
}
