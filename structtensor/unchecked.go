package structtensor

import "github.com/structtensor/structtensor-go/internal/unchecked"

// The constructors package internal/unchecked hands to the packages that
// build values from the engine's outputs: NewRowSplits and
// NewStringTensor without their linear checks (the engine's outputs pass
// them by construction), re-validated only with -tags invariants.
func init() {
	unchecked.RowSplits = func(splits []int64) any {
		p := &RowPartition{splits: splits, nrows: len(splits) - 1, rowLen: -1, nvalues: int(splits[len(splits)-1])}
		if invariantsEnabled {
			if err := validatePartition(p); err != nil {
				panic("structtensor: invariant violated: unchecked row splits: " + err.Error())
			}
		}
		return p
	}
	unchecked.StringTensor = func(data []byte, offsets []int64, utf8 bool) any {
		t := &Tensor{dtype: String, shape: Shape{len(offsets) - 1}, strData: data, strOffsets: offsets, utf8: utf8}
		checkInvariants(t)
		return t
	}
}
