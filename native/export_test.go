package native

// FailThreadStarts makes every later start of an engine pool thread fail
// (true) or start again (false).
var FailThreadStarts = failThreadStarts

// ExampleCopyInto decodes records with an ExamplePlan and copies the
// result into a block at given offsets (st_example_result_copy_into),
// returning the engine's code.
var ExampleCopyInto = (*ExamplePlan).copyInto
