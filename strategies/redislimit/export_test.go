package redislimit

// Hooks for the tests of package redislimit_test, which may import the
// embedded server (package redislimit's own tests may not: it imports
// redislimit).
var CheckCorruptStates = checkCorruptStates
var CheckAgainstOracle = checkAgainstOracle
