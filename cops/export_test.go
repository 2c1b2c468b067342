package cops

import "github.com/structtensor/structtensor-go/internal/testhook"

// The kernel's tests decode small batches on several threads so as to
// exercise several chunks (each writing its share of every lent block,
// closed up in place); a decode gives a thread a walk of at least 100 us
// at the plan's measured rate (the engine's min_thread_seconds, shared by
// the kernel), which would leave most of them one chunk.
func init() { testhook.MinThreadSeconds(0) }

// Test hooks into the kernel's output memory (decode_op.cc) and the
// engine's sizing of it.
var (
	LoanedBlocks   = loanedBlocks
	OutputCounts   = outputCounts
	InjectFault    = injectFault
	LendLog        = lendLog
	LendLogEntries = lendLogEntries
	ArenaLoans     = arenaLoans
	HugePageBytes  = hugePageBytes
)
