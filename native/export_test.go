package native

// FailThreadStarts makes every later start of an engine pool thread fail
// (true) or start again (false).
var FailThreadStarts = failThreadStarts
