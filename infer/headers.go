package infer

import "github.com/rlcheck/rlcheck/rlheader"

// The rate-limit headers infer reads are package rlheader's, which serve
// writes too; these names keep infer's API whole.
type (
	Header    = rlheader.Header
	Limit     = rlheader.Limit
	Remaining = rlheader.Remaining
	Announced = rlheader.Announced
	BadHeader = rlheader.BadHeader
)

// NumHeaders counts the headers infer reads.
const NumHeaders = rlheader.NumHeaders

// HeaderByCol returns the header whose default log column is col.
func HeaderByCol(col string) (Header, bool) { return rlheader.HeaderByCol(col) }
