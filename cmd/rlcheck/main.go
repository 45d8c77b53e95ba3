// Command rlcheck checks send logs against several rate limits at once and
// simulates the strategies that enforce them.
package main

import (
	"os"
)

func main() {
	os.Exit(Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
