// Package query parses the filter language of instance lists: the text of
// `durabox list --where`, of GET /v1/instances?where= and of the
// dashboard's filter box. Parse turns the text into an Expr, which a store
// compiles to SQL with bound arguments (never text built from values).
//
// The language, in full:
//
//	expr    = or
//	or      = and { OR and }
//	and     = unary { AND unary }
//	unary   = NOT unary | "(" expr ")" | term
//	term    = field op value
//	        | field [NOT] IN "(" value { "," value } ")"
//	        | field IS [NOT] SET
//	        | has "(" field ")"
//	op      = "=" | "!=" | "<>" | "<" | "<=" | ">" | ">="
//	value   = string | number | TRUE | FALSE
//	string  = '"' … '"' | "'" … "'"   (backslash escapes \" \' \\)
//	number  = [-] digits [ . digits ] [ e [±] digits ]
//
// Keywords (AND, OR, NOT, IN, IS, SET, TRUE, FALSE) are case-insensitive.
// A field is a built-in (status, name, id, created, updated) or the name
// of a search attribute an orchestration set with ctx.SetAttributes.
//
// What a comparison means:
//   - A string compares with string attributes and with each element of a
//     keyword list (tags = "vip": the list holds "vip"). A string in RFC
//     3339 form also compares with time attributes, by time.
//   - A number compares with int and float attributes, by value.
//   - TRUE and FALSE compare with bool attributes, with = and != only.
//   - a != v holds when the attribute is set and a = v does not hold, so
//     it never selects an instance without the attribute; NOT (a = v) does.
//   - status takes a status (Running, Completed, …), created and updated an
//     RFC 3339 time, id and name a string.
package query
