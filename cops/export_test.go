package cops

// Test hooks into the kernel's output memory (decode_op.cc) and the
// engine's sizing of it.
var (
	LoanedBlocks   = loanedBlocks
	OutputCounts   = outputCounts
	InjectFault    = injectFault
	LendLog        = lendLog
	LendLogEntries = lendLogEntries
)
