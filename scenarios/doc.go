// Package scenarios reads simulation scenarios from YAML into
// workload.Scenario, strictly: an unknown field or a bad value is an error
// naming the file and the line. The scenarios rlcheck ships are embedded,
// so they can be run by name.
package scenarios
