package sqlite

/*
// The SQLite that go-sqlite3 builds is linked into the program: the one
// function needed is declared here, so that no sqlite3.h is.
typedef struct sqlite3 sqlite3;
extern int sqlite3_db_config(sqlite3 *db, int op, ...);

// durabox_qpsg sets SQLite's query planner stability guarantee
// (SQLITE_DBCONFIG_ENABLE_QPSG, 1007) on db: on with set 1, off with 0,
// unchanged with -1. It returns SQLite's result code, and in *on whether
// the guarantee is on.
static int durabox_qpsg(void *db, int set, int *on) {
	return sqlite3_db_config((sqlite3 *)db, 1007, set, on);
}
*/
import "C"

import (
	"fmt"
	"reflect"
	"unsafe"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// stablePlans sets the query planner stability guarantee on c as
// durabox_qpsg does, and reports whether it is on.
func stablePlans(c *sqlite3.SQLiteConn, set int) (on bool, err error) {
	db, err := handle(c)
	if err != nil {
		return false, err
	}
	var state C.int
	if rc := C.durabox_qpsg(db, C.int(set), &state); rc != 0 {
		return false, fmt.Errorf("sqlite: set up a connection: the query planner stability guarantee: SQLite result code %d", int(rc))
	}
	return state == 1, nil
}

// handle returns c's SQLite handle. go-sqlite3 does not expose
// sqlite3_db_config, nor the handle it needs: the handle is read from its
// connection's field.
func handle(c *sqlite3.SQLiteConn) (unsafe.Pointer, error) {
	db := reflect.ValueOf(c).Elem().FieldByName("db")
	if !db.IsValid() || db.Kind() != reflect.Pointer || db.IsNil() {
		return nil, fmt.Errorf("sqlite: set up a connection: go-sqlite3 keeps its SQLite handle in no field db any more; the store must be updated for this go-sqlite3")
	}
	return db.UnsafePointer(), nil
}
