//go:build !unix

package adapter

import "os/exec"

func shellCommand(command string) *exec.Cmd {
	return exec.Command("cmd", "/C", command)
}

func killTree(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
