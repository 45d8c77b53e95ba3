// Package release holds no code: its tests check the release and CI files at
// the repository's root (.goreleaser.yaml with goreleaser, action.yml and the
// README's workflow with actionlint), with those tools at pinned versions,
// installed by "go install" into the user's cache (actionlint by the test
// on first use, goreleaser by .ci/run). A tool that is missing skips its
// test with a message; under CI=true, actionlint missing is a failure.
package release
