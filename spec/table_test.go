package spec

// The distribution signatures the checker reads (ir.Families) are filled in
// by package derive from its table.
import _ "github.com/vigen-go/vigen/derive"
